import Foundation

/// Locates and decodes the JSON test-vector files used by the crypto suites.
enum TestVectors {
    /// `Tests/WalletCryptoTests/Vectors` of this repository.
    static let localDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors")

    /// `../shared/vectors` next to the repository root (three levels above this file).
    static let sharedDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    /// Decodes a file of `Vectors/`.
    static func local<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: localDirectory.appendingPathComponent(name)))
    }

    /// Decodes a file of the shared vector folder (path relative to `shared/vectors`).
    static func shared<T: Decodable>(_ path: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: sharedDirectory.appendingPathComponent(path)))
    }
}

/// Bytes from hex (upper or lower case); traps on malformed test data.
func hex(_ text: String) -> [UInt8] {
    let characters = Array(text.utf8)
    precondition(characters.count % 2 == 0, "odd-length hex in test data")
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: preconditionFailure("bad hex digit in test data")
        }
    }
    return stride(from: 0, to: characters.count, by: 2).map { nibble(characters[$0]) << 4 | nibble(characters[$0 + 1]) }
}

/// Lowercase hex of `bytes`.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// A big-endian integer re-encoded at a fixed width (drops leading zero bytes, or left-pads).
func fixedWidth(_ bytes: [UInt8], _ width: Int) -> [UInt8] {
    let trimmed = Array(bytes.drop(while: { $0 == 0 }))
    return [UInt8](repeating: 0, count: max(0, width - trimmed.count)) + trimmed
}
