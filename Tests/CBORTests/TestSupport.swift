import Foundation
@testable import CBOR

/// Bytes from a hex string such as "a26161".
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8).filter { $0 != UInt8(ascii: " ") }
    var bytes: [UInt8] = []
    var index = 0
    while index + 1 < digits.count {
        let pair = String(decoding: digits[index...index + 1], as: UTF8.self)
        bytes.append(UInt8(pair, radix: 16) ?? 0)
        index += 2
    }
    return bytes
}

/// Lowercase hex of bytes.
func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// The error thrown by `body`, or nil when it succeeded.
func decodingError(_ body: () throws(CBORError) -> Void) -> CBORError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

/// The error `CBOR.decode` reports for `bytes`.
func decodeError(_ bytes: [UInt8], options: CBORDecodingOptions = .default) -> CBORError? {
    decodingError { () throws(CBORError) in _ = try CBOR.decode(bytes, options: options) }
}
