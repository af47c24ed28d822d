import Foundation

/// A calendar date without time or time zone: RFC 3339 `full-date` ("YYYY-MM-DD"), as
/// carried by tag 1004 (RFC 8943) and ISO 18013-5 `full-date` elements such as
/// `birth_date`. Years are 0000...9999, the proleptic Gregorian calendar.
public struct CBORFullDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, 0...9999.
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...28/29/30/31.
    public let day: Int

    /// Creates a date after checking that it exists.
    /// - Throws: ``CBORError/invalidDate(_:)`` for, e.g., February 30th.
    public init(year: Int, month: Int, day: Int) throws(CBORError) {
        guard (0...9999).contains(year), (1...12).contains(month),
              day >= 1, day <= CivilCalendar.daysInMonth(year: year, month: month) else {
            throw .invalidDate("no such date: \(year)-\(month)-\(day)")
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly "YYYY-MM-DD" (RFC 3339 §5.6 `full-date`).
    public init(rfc3339 string: String) throws(CBORError) {
        let chars = Array(string.utf8)
        guard chars.count == 10, chars[4] == UInt8(ascii: "-"), chars[7] == UInt8(ascii: "-"),
              let year = CivilCalendar.digits(chars, 0, 4),
              let month = CivilCalendar.digits(chars, 5, 2),
              let day = CivilCalendar.digits(chars, 8, 2) else {
            throw .invalidDate("not a full-date: \(string.prefix(40))")
        }
        try self.init(year: year, month: month, day: day)
    }

    /// The UTC calendar date of `date`.
    /// - Throws: ``CBORError/invalidDate(_:)`` outside years 0000...9999.
    public init(_ date: Date) throws(CBORError) {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, abs(seconds) < 1e12 else { throw .invalidDate("date out of range") }
        let days = Int((seconds / 86_400).rounded(.down))
        let (year, month, day) = CivilCalendar.civil(fromDays: days)
        try self.init(year: year, month: month, day: day)
    }

    /// Midnight UTC at the start of this date.
    public var date: Date {
        Date(timeIntervalSince1970: Double(CivilCalendar.days(year: year, month: month, day: day)) * 86_400)
    }

    /// Days since 1970-01-01 (negative before), as tag 100 carries them (RFC 8943).
    public var daysSinceEpoch: Int {
        CivilCalendar.days(year: year, month: month, day: day)
    }

    /// "YYYY-MM-DD".
    public var description: String {
        CivilCalendar.pad(year, 4) + "-" + CivilCalendar.pad(month, 2) + "-" + CivilCalendar.pad(day, 2)
    }

    /// Orders dates chronologically.
    public static func < (lhs: CBORFullDate, rhs: CBORFullDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// Proleptic Gregorian arithmetic on plain integers, so date handling never depends on
/// `Calendar`, locales or time zones.
enum CivilCalendar {
    static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given date (era-based algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01. `days` must be within ±10^9.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// The decimal number in `chars[start..<start+count]`, or nil unless all are digits.
    static func digits(_ chars: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start >= 0, count > 0, start + count <= chars.count else { return nil }
        var value = 0
        for k in start..<(start + count) {
            let c = chars[k]
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(c - UInt8(ascii: "0"))
        }
        return value
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
