import CBOR

/// Writes CBOR whose parts are partly values and partly bytes kept exactly as received
/// (IssuerSignedItemBytes, a SessionTranscript, COSE messages), so that what was signed or
/// hashed is passed on unchanged (DESIGN rule 3).
struct CBORSplice {
    private(set) var bytes: [UInt8] = []

    init() {}

    /// A splice whose buffer holds `capacity` bytes before it grows: a response that
    /// carries a portrait is written without re-copying it as the buffer doubles.
    init(reservingCapacity capacity: Int) { bytes.reserveCapacity(capacity) }

    /// A definite-length head (RFC 8949 §3): major type and argument, shortest form.
    mutating func head(major: UInt8, _ argument: UInt64) {
        let top = major << 5
        switch argument {
        case 0..<24: bytes.append(top | UInt8(argument))
        case 24...0xff: bytes += [top | 24, UInt8(argument)]
        case 0x100...0xffff: bytes += [top | 25, UInt8(argument >> 8), UInt8(argument & 0xff)]
        case 0x1_0000...0xffff_ffff:
            bytes.append(top | 26)
            for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((argument >> UInt64(shift)) & 0xff)) }
        default:
            bytes.append(top | 27)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((argument >> UInt64(shift)) & 0xff)) }
        }
    }

    mutating func arrayHead(_ count: Int) { head(major: 4, UInt64(count)) }
    mutating func mapHead(_ count: Int) { head(major: 5, UInt64(count)) }
    mutating func text(_ string: String) {
        head(major: 3, UInt64(string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }
    mutating func byteString(_ content: [UInt8]) {
        head(major: 2, UInt64(content.count))
        bytes += content
    }
    /// `#6.24(bstr .cbor X)` around already encoded `content`.
    mutating func embedded(_ content: some Collection<UInt8>) {
        head(major: 6, 24)
        head(major: 2, UInt64(content.count))
        bytes += content
    }
    mutating func value(_ value: CBOR) { bytes += value.encoded() }
    mutating func raw(_ encoded: some Collection<UInt8>) { bytes += encoded }

    /// `#6.24(bstr .cbor X)` around `content`, as bytes.
    static func embedded(_ content: some Collection<UInt8>) -> [UInt8] {
        var splice = CBORSplice()
        splice.embedded(content)
        return splice.bytes
    }
}

/// Decoding limits for mdoc structures and typed accessors over `CBORItem`.
enum MdocDecoding {
    static let options = CBORDecodingOptions(maxDepth: 64, maxItems: 1 << 20, maxInputSize: 16 << 20)

    static func item(_ bytes: [UInt8]) throws(MdocError) -> CBORItem {
        do { return try CBOR.decodeItem(bytes, options: options) } catch { throw .cbor(error) }
    }

    /// The content of a `#6.24(bstr .cbor X)` item, decoded with exact bytes.
    static func embedded(_ item: CBORItem, _ what: String) throws(MdocError) -> CBORItem {
        guard item.tag == 24 else { throw .malformed(what, .wrongType(expected: .embeddedCBOR)) }
        do { return try item.embeddedItem(options: options) } catch { throw .cbor(error) }
    }
}

// The scalar readers check the major type before asking for the value, which is built
// on demand: a wrong-type container is refused without building it.
extension CBORItem {
    func required(_ key: String, in what: String) throws(MdocError) -> CBORItem {
        guard majorType == 5 else { throw .malformed(what, .wrongType(expected: .map)) }
        guard let value = self[key] else { throw .malformed(what, .missingMember(key)) }
        return value
    }

    func requiredMap(_ what: String) throws(MdocError) -> [(key: CBORItem, value: CBORItem)] {
        guard majorType == 5 else { throw .malformed(what, .wrongType(expected: .map)) }
        return mapEntries
    }

    func requiredArray(_ what: String) throws(MdocError) -> [CBORItem] {
        guard majorType == 4 else { throw .malformed(what, .wrongType(expected: .array)) }
        return children
    }

    func text(_ what: String) throws(MdocError) -> String {
        guard majorType == 3, let text = value.stringValue else { throw .malformed(what, .wrongType(expected: .textString)) }
        return text
    }

    func bytes(_ what: String) throws(MdocError) -> [UInt8] {
        guard majorType == 2, let bytes = value.bytesValue else { throw .malformed(what, .wrongType(expected: .byteString)) }
        return bytes
    }

    func unsigned(_ what: String) throws(MdocError) -> UInt64 {
        guard majorType == 0, case .unsigned(let number) = value else { throw .malformed(what, .wrongType(expected: .unsignedInteger)) }
        return number
    }

    func int(_ what: String) throws(MdocError) -> Int {
        guard majorType <= 1, let number = value.intValue else { throw .malformed(what, .wrongType(expected: .integer)) }
        return number
    }

    func bool(_ what: String) throws(MdocError) -> Bool {
        guard majorType == 7, let flag = value.boolValue else { throw .malformed(what, .wrongType(expected: .boolean)) }
        return flag
    }

    func date(_ what: String) throws(MdocError) -> Date {
        // ISO 18013-5 §7.2.1 tdate = #6.0(tstr); tag 1 is accepted too when reading.
        do { return try value.dateValue() } catch { throw .malformed(what, .wrongType(expected: .date)) }
    }

    var exactBytes: [UInt8] { Array(encodedBytes) }
}

import Foundation
