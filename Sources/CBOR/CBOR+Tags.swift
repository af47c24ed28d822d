import Foundation

// Helpers for the tags an identity wallet meets: 0 and 1 (RFC 8949 §3.4.1-2), 24
// (RFC 8949 §3.4.5.1) and 100/1004 (RFC 8943).
extension CBOR {
    /// Tag 24: `#6.24(bstr .cbor value)`, the embedded encoding of `value`.
    public static func embedded(_ value: CBOR, options: CBOREncodingOptions = .init()) -> CBOR {
        .tagged(24, .byteString(value.encoded(options: options)))
    }

    /// Tag 24 wrapping bytes that are already encoded (kept as they are).
    public static func embedded(encodedBytes: [UInt8]) -> CBOR {
        .tagged(24, .byteString(encodedBytes))
    }

    /// Decodes the item embedded in a tag-24 item (or in a plain byte string).
    public func embeddedValue(options: CBORDecodingOptions = .default) throws(CBORError) -> CBOR {
        switch self {
        case .tagged(24, .byteString(let bytes)), .byteString(let bytes):
            return try CBOR.decode(bytes, options: options)
        default:
            throw .typeMismatch(expected: "tag 24 with a byte string", path: "")
        }
    }

    /// Tag 0: `date` as an RFC 3339 date-time string in UTC ("2013-03-21T20:04:00Z"),
    /// with up to six fractional digits when the time is not a whole second.
    /// - Throws: ``CBORError/unsupportedValue(_:)`` outside years 0000...9999.
    public static func dateTime(_ date: Date) throws(CBORError) -> CBOR {
        .tagged(0, .textString(try DateTimeFormat.format(date)))
    }

    /// Tag 1: `date` as seconds since 1970-01-01T00:00Z; an integer when whole, else a
    /// double.
    public static func epochDateTime(_ date: Date) -> CBOR {
        let seconds = date.timeIntervalSince1970
        if seconds.rounded() == seconds, abs(seconds) < 0x1p63, let whole = Int64(exactly: seconds),
           let value = CBOR(exactly: whole) {
            return .tagged(1, value)
        }
        return .tagged(1, .double(seconds))
    }

    /// Tag 1004: a full-date text string (RFC 8943).
    public static func fullDate(_ date: CBORFullDate) -> CBOR {
        .tagged(1004, .textString(date.description))
    }

    /// The instant denoted by a tag-0 date-time string or a tag-1 epoch number (integer
    /// or finite float). Parsing is strict RFC 3339 §5.6; leap seconds (":60") are
    /// rejected because `Date` cannot denote them.
    public func dateValue() throws(CBORError) -> Date {
        switch self {
        case .tagged(0, .textString(let text)):
            return try DateTimeFormat.parse(text)
        case .tagged(1, let content):
            return try Self.epochDate(content)
        default:
            throw .typeMismatch(expected: "tag 0 or tag 1", path: "")
        }
    }

    /// The date of a tag-1004 full-date string or a tag-100 day count (RFC 8943).
    public func fullDateValue() throws(CBORError) -> CBORFullDate {
        switch self {
        case .tagged(1004, .textString(let text)):
            return try CBORFullDate(rfc3339: text)
        case .tagged(100, let content):
            guard let days = content.intValue, (-4_000_000...4_000_000).contains(days) else {
                throw .invalidDate("tag 100 needs a day count within years 0000-9999")
            }
            let (year, month, day) = CivilCalendar.civil(fromDays: days)
            return try CBORFullDate(year: year, month: month, day: day)
        default:
            throw .typeMismatch(expected: "tag 1004 or tag 100", path: "")
        }
    }

    static func epochDate(_ content: CBOR) throws(CBORError) -> Date {
        let seconds: Double
        switch content {
        case .unsigned(let n): seconds = Double(n)
        case .negative(let n): seconds = -1 - Double(n)
        default:
            guard let value = content.doubleValue else {
                throw .typeMismatch(expected: "an integer or float for tag 1", path: "")
            }
            seconds = value
        }
        guard seconds.isFinite else { throw .invalidDate("epoch time is not finite") }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// RFC 3339 §5.6 `date-time`, parsed and printed by hand.
enum DateTimeFormat {
    static func format(_ date: Date) throws(CBORError) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 1e12 else {
            throw .unsupportedValue("date outside years 0000-9999")
        }
        var seconds = Int(interval.rounded(.down))
        var micros = Int(((interval - Double(seconds)) * 1_000_000).rounded())
        if micros >= 1_000_000 { seconds += 1; micros -= 1_000_000 }
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.civil(fromDays: days)
        guard (0...9999).contains(year) else { throw .unsupportedValue("date outside years 0000-9999") }
        var text = CivilCalendar.pad(year, 4) + "-" + CivilCalendar.pad(month, 2) + "-" + CivilCalendar.pad(day, 2)
        text += "T" + CivilCalendar.pad(secondOfDay / 3600, 2) + ":" + CivilCalendar.pad(secondOfDay / 60 % 60, 2)
        text += ":" + CivilCalendar.pad(secondOfDay % 60, 2)
        if micros > 0 {
            var fraction = CivilCalendar.pad(micros, 6)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    static func parse(_ text: String) throws(CBORError) -> Date {
        let c = Array(text.utf8)
        func fail() -> CBORError { .invalidDate("not an RFC 3339 date-time: \(text.prefix(40))") }
        func at(_ i: Int, _ ascii: Unicode.Scalar) -> Bool { i < c.count && c[i] == UInt8(ascii: ascii) }
        guard c.count >= 20, c.count <= 64, at(4, "-"), at(7, "-"), at(10, "T") || at(10, "t"),
              at(13, ":"), at(16, ":"),
              let year = CivilCalendar.digits(c, 0, 4), let month = CivilCalendar.digits(c, 5, 2),
              let day = CivilCalendar.digits(c, 8, 2), let hour = CivilCalendar.digits(c, 11, 2),
              let minute = CivilCalendar.digits(c, 14, 2), let second = CivilCalendar.digits(c, 17, 2),
              hour <= 23, minute <= 59, second <= 59 else { throw fail() }
        let fullDate = try CBORFullDate(year: year, month: month, day: day)
        var index = 19
        var fraction = 0.0
        if at(index, ".") {
            index += 1
            var scale = 0.1
            let firstDigit = index
            while index < c.count, c[index] >= UInt8(ascii: "0"), c[index] <= UInt8(ascii: "9") {
                fraction += Double(c[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > firstDigit else { throw fail() }
        }
        var offsetSeconds = 0
        if at(index, "Z") || at(index, "z") {
            index += 1
        } else if at(index, "+") || at(index, "-") {
            guard at(index + 3, ":"), let offsetHour = CivilCalendar.digits(c, index + 1, 2),
                  let offsetMinute = CivilCalendar.digits(c, index + 4, 2),
                  offsetHour <= 23, offsetMinute <= 59 else { throw fail() }
            offsetSeconds = (offsetHour * 3600 + offsetMinute * 60) * (at(index, "-") ? -1 : 1)
            index += 6
        } else {
            throw fail()
        }
        guard index == c.count else { throw fail() }
        let whole = fullDate.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(whole) + fraction)
    }
}
