import Foundation
import Testing
import WalletEncoding
@testable import CBOR

/// Bytes from a hex string such as "a26161" (spaces allowed between bytes). A malformed
/// string (an odd number of digits, a character that is not a hex digit) fails the test
/// instead of yielding other bytes.
func hex(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(Hex.decode(text.filter { $0 != " " }), "test data is not hex: \(text.prefix(40))",
                 sourceLocation: sourceLocation)
}

/// Lowercase hex of bytes.
func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 { Hex.encode(bytes) }

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
