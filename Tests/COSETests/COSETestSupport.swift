import CBOR
import COSE
import Foundation
import WalletCrypto
import WalletEncoding

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
        guard let object = untyped(try JSONValue.parse([UInt8](data))) as? [String: Any] else {
            throw VectorError(description: "\(relativePath) is not a JSON object")
        }
        return object
    }

    /// A parsed JSON value as the `[String: Any]` / `[Any]` / `String` / `Int` / `Double` /
    /// `Bool` / `NSNull` tree the vector helpers walk. Parsing is WalletEncoding's (the
    /// SDK's one JSON home).
    static func untyped(_ value: JSONValue) -> Any {
        switch value {
        case .object(let members): return Dictionary(uniqueKeysWithValues: members.map { ($0.key, untyped($0.value)) })
        case .array(let items): return items.map(untyped)
        case .string(let text): return text
        case .bool(let flag): return flag
        case .null: return NSNull()
        default: return value.intValue.map { $0 as Any } ?? value.doubleValue.map { $0 as Any } ?? NSNull()
        }
    }


    /// The upstream cose-wg examples of a vector file.
    static func upstreamVectors(_ file: String) throws -> [[String: Any]] {
        let root = try json("cose/\(file)")
        guard let vectors = root["vectors"] as? [[String: Any]] else { throw VectorError(description: "no vectors") }
        return vectors.compactMap { $0["upstream"] as? [String: Any] }
    }

    static func hex(_ string: String) throws -> [UInt8] {
        guard let bytes = Hex.decode(string) else { throw VectorError(description: "bad hex: \(string.prefix(40))") }
        return bytes
    }

    static func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static func base64URL(_ string: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(string) else { throw VectorError(description: "bad base64url") }
        return bytes
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
