import Foundation
import Testing
@testable import CBOR

@Suite("Date tags 0, 1, 100 and 1004")
struct DateTests {
    static let instant = Date(timeIntervalSince1970: 1_363_896_240)

    @Test("tag 0 writes RFC 3339 in UTC and reads it back")
    func tag0() throws {
        #expect(try CBOR.dateTime(Self.instant) == .tagged(0, "2013-03-21T20:04:00Z"))
        #expect(try CBOR.dateTime(Date(timeIntervalSince1970: 0.25)) == .tagged(0, "1970-01-01T00:00:00.25Z"))
        #expect(try CBOR.dateTime(Date(timeIntervalSince1970: -1)) == .tagged(0, "1969-12-31T23:59:59Z"))
        #expect(try CBOR.tagged(0, "2013-03-21T20:04:00Z").dateValue() == Self.instant)
        #expect(try CBOR.tagged(0, "2013-03-21T22:04:00+02:00").dateValue() == Self.instant)
        #expect(try CBOR.tagged(0, "2013-03-21t20:04:00z").dateValue() == Self.instant)
        #expect(try CBOR.tagged(0, "2013-03-21T20:04:00.5Z").dateValue() == Self.instant + 0.5)
        #expect(try CBOR.tagged(0, "2024-02-29T00:00:00Z").dateValue() == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(throws: CBORError.unsupportedValue("date outside years 0000-9999")) {
            try CBOR.dateTime(Date(timeIntervalSince1970: 1e12))
        }
    }

    @Test("malformed or impossible date-time strings are rejected", arguments: [
        "", "2013-03-21", "2013-03-21 20:04:00Z", "2013-03-21T20:04:00", "2013-02-30T00:00:00Z",
        "2023-02-29T00:00:00Z", "2013-13-01T00:00:00Z", "2013-03-21T24:00:00Z", "2013-03-21T20:60:00Z",
        "2013-03-21T20:04:60Z", "2013-03-21T20:04:00.Z", "2013-03-21T20:04:00+2:00", "2013-03-21T20:04:00+24:00",
        "+2013-03-21T20:04:00Z", "２０１３-03-21T20:04:00Z", "2013-03-21T20:04:00Zjunk", "2013-03-21T20:04:00.5",
    ])
    func invalidDateTimes(_ text: String) {
        #expect {
            try CBOR.tagged(0, .textString(text)).dateValue()
        } throws: { error in
            if case .invalidDate? = error as? CBORError { return true }
            return false
        }
    }

    @Test("impossible calendar dates in date-times say so")
    func impossibleDates() {
        #expect(throws: CBORError.invalidDate("no such date: 2013-2-30")) {
            try CBOR.tagged(0, "2013-02-30T00:00:00Z").dateValue()
        }
    }

    @Test("tag 1 accepts integers and finite floats")
    func tag1() throws {
        #expect(CBOR.epochDateTime(Self.instant) == .tagged(1, 1_363_896_240))
        #expect(CBOR.epochDateTime(Date(timeIntervalSince1970: -1.5)) == .tagged(1, -1.5))
        #expect(try CBOR.tagged(1, 1_363_896_240).dateValue() == Self.instant)
        #expect(try CBOR.tagged(1, -1).dateValue() == Date(timeIntervalSince1970: -1))
        #expect(try CBOR.tagged(1, .half(0x3E00)).dateValue() == Date(timeIntervalSince1970: 1.5))
        #expect(throws: CBORError.invalidDate("epoch time is not finite")) {
            try CBOR.tagged(1, .double(.nan)).dateValue()
        }
        #expect(throws: CBORError.typeMismatch(expected: "an integer or float for tag 1", path: "")) {
            try CBOR.tagged(1, "1").dateValue()
        }
        #expect(throws: CBORError.typeMismatch(expected: "tag 0 or tag 1", path: "")) {
            try CBOR.unsigned(1).dateValue()
        }
    }

    @Test("tag 1004 full-dates are checked and convert to midnight UTC")
    func fullDates() throws {
        let date = try CBORFullDate(rfc3339: "1985-04-12")
        #expect(date.year == 1985 && date.month == 4 && date.day == 12)
        #expect(date.description == "1985-04-12")
        #expect(date.date == Date(timeIntervalSince1970: 482_112_000))
        #expect(CBOR.fullDate(date) == .tagged(1004, "1985-04-12"))
        #expect(try CBOR.tagged(1004, "1985-04-12").fullDateValue() == date)
        #expect(try CBORFullDate(Date(timeIntervalSince1970: 482_112_000 + 86_399)) == date)
        #expect(try CBORFullDate(rfc3339: "2024-02-29").daysSinceEpoch == 19_782)
        #expect(try CBORFullDate(rfc3339: "0000-01-01") < CBORFullDate(rfc3339: "9999-12-31"))
        #expect(try CBOR.tagged(100, -1).fullDateValue() == CBORFullDate(year: 1969, month: 12, day: 31))
        #expect(try CBOR.tagged(100, 19_782).fullDateValue().description == "2024-02-29")
    }

    @Test("malformed full-dates are rejected", arguments: [
        "1985-4-12", "85-04-12", "1985-04-12T00:00:00Z", "1985/04/12", "1985-00-12", "1985-04-31",
        "2023-02-29", "1900-02-29", "", "1985-04-1x",
    ])
    func invalidFullDates(_ text: String) {
        #expect(throws: CBORError.self) { try CBOR.tagged(1004, .textString(text)).fullDateValue() }
        #expect(throws: CBORError.self) { try CBORFullDate(rfc3339: text) }
    }

    @Test("out-of-range day counts and dates are rejected, not trapped")
    func ranges() {
        #expect(throws: CBORError.self) { try CBOR.tagged(100, .negative(.max)).fullDateValue() }
        #expect(throws: CBORError.self) { try CBOR.tagged(100, .unsigned(.max)).fullDateValue() }
        #expect(throws: CBORError.self) { try CBOR.tagged(100, .negative(UInt64(Int.max))).fullDateValue() }
        #expect(throws: CBORError.self) { try CBORFullDate(Date(timeIntervalSince1970: .infinity)) }
        #expect(throws: CBORError.self) { try CBORFullDate(year: 2024, month: 13, day: 1) }
    }
}
