import CBOR
import COSE
import Foundation
import WalletCrypto

/// Helpers shared by the COSE tests: vector loading, hex and base64url, JWK-style keys.
enum COSETestSupport {
    /// `../shared/vectors` beside the repository root.
    static let vectorsDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    struct VectorError: Error, CustomStringConvertible {
        let description: String
    }

    static func json(_ relativePath: String) throws -> [String: Any] {
        let data = try Data(contentsOf: vectorsDirectory.appendingPathComponent(relativePath))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw VectorError(description: "\(relativePath) is not a JSON object")
        }
        return object
    }

    /// The upstream cose-wg examples of a vector file.
    static func upstreamVectors(_ file: String) throws -> [[String: Any]] {
        let root = try json("cose/\(file)")
        guard let vectors = root["vectors"] as? [[String: Any]] else { throw VectorError(description: "no vectors") }
        return vectors.compactMap { $0["upstream"] as? [String: Any] }
    }

    static func hex(_ string: String) throws -> [UInt8] {
        let characters = Array(string.utf8)
        guard characters.count % 2 == 0 else { throw VectorError(description: "odd hex length") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else {
                throw VectorError(description: "bad hex")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    static func hexString(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func base64URL(_ string: String) throws -> [UInt8] {
        var base64 = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { throw VectorError(description: "bad base64url") }
        return Array(data)
    }

    /// A COSE_Key from a cose-wg JWK-style key ("EC" or "OKP" with base64url members).
    static func coseKey(fromJWK jwk: [String: Any], includePrivate: Bool = false) throws -> COSEKey {
        let kty = jwk["kty"] as? String
        let crv = jwk["crv"] as? String
        // The EdDSA examples give x and d in hex ("x_hex", "d_hex") instead of base64url.
        let x = try (jwk["x_hex"] as? String).map(hex) ?? base64URL(jwk["x"] as? String ?? "")
        let d = includePrivate ? try (jwk["d_hex"] as? String).map(hex) ?? (jwk["d"] as? String).map(base64URL) : nil
        switch (kty, crv) {
        case ("EC", "P-256"), ("EC", "P-384"), ("EC", "P-521"):
            let curve: COSEKey.Curve = crv == "P-256" ? .p256 : crv == "P-384" ? .p384 : .p521
            let y = try base64URL(jwk["y"] as? String ?? "")
            return try COSEKey(parameters: .ec2(curve: curve, x: x, y: .value(y), d: d))
        case ("OKP", "Ed25519"):
            return try COSEKey(parameters: .okp(curve: .ed25519, x: x, d: d))
        default:
            throw VectorError(description: "unsupported JWK \(kty ?? "?") \(crv ?? "?")")
        }
    }

    /// The symmetric key bytes of a cose-wg Mac0 vector (first recipient's "k").
    static func macKey(_ vector: [String: Any]) throws -> SymmetricKey {
        guard let input = vector["input"] as? [String: Any], let mac0 = input["mac0"] as? [String: Any],
              let recipients = mac0["recipients"] as? [[String: Any]],
              let key = recipients.first?["key"] as? [String: Any], let k = key["k"] as? String else {
            throw VectorError(description: "no MAC key")
        }
        return SymmetricKey(bytes: try base64URL(k))
    }

    static func string(_ object: [String: Any], _ path: String...) -> String? {
        var current: Any? = object
        for component in path { current = (current as? [String: Any])?[component] }
        return current as? String
    }

    static func dictionary(_ object: [String: Any], _ path: String...) -> [String: Any]? {
        var current: Any? = object
        for component in path { current = (current as? [String: Any])?[component] }
        return current as? [String: Any]
    }
}
