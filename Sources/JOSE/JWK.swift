import Foundation
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// A JSON Web Key (RFC 7517): an EC key on P-256, P-384 or P-521, an OKP key
/// (Ed25519; X25519 is read for key sets but not used), a symmetric `oct` key, or
/// an RSA public key (read only, for thumbprints and key sets).
///
/// Parsing is strict: the members of the key type must be present with the right
/// lengths, and an EC point must lie on its curve. All other members (`kid`, `use`,
/// `alg`, `x5c`, `key_ops`, ...) are kept as they came.
public struct JWK: Sendable, Equatable, Hashable {
    /// The `kty` values this module reads.
    public enum KeyType: String, Sendable, Hashable {
        /// Elliptic curve (RFC 7518 §6.2).
        case ec = "EC"
        /// Octet key pair (RFC 8037).
        case okp = "OKP"
        /// Symmetric octet sequence (RFC 7518 §6.4).
        case oct
        /// RSA (RFC 7518 §6.3); public members only are checked.
        case rsa = "RSA"
    }

    /// The key type (`kty`).
    public let keyType: KeyType
    /// All members of the key, by name, as parsed or built.
    public let members: JSONObject

    /// The members that hold private key material, per key type (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
    private static let privateMemberNames: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    // MARK: Parsing

    /// Parses a JWK from its JSON text.
    public init(json: [UInt8]) throws(JOSEError) {
        try self.init(members: try JSONValue.parseObject(json, what: .jwk))
    }

    /// Parses a JWK from its JSON text.
    public init(json: String) throws(JOSEError) {
        try self.init(json: Array(json.utf8))
    }

    /// Validates `members` as a JWK.
    public init(members: JSONObject) throws(JOSEError) {
        guard let kty = members["kty"]?.stringValue else { throw .invalidKey(.missingMember("kty")) }
        guard let keyType = KeyType(rawValue: kty) else { throw .unsupportedAlgorithm(.kty, value: kty) }
        for name in ["kid", "use", "alg"] {
            if let member = members[name], member.stringValue == nil { throw .invalidKey(.invalidMember(name)) }
        }
        if let x5c = members["x5c"] {
            guard let entries = x5c.arrayValue, !entries.isEmpty,
                  entries.allSatisfy({ $0.stringValue.flatMap { Base64.decodeStrict($0) } != nil }) else {
                throw .invalidKey(.invalidMember("x5c"))
            }
        }
        self.keyType = keyType
        self.members = members
        try validateKeyMaterial()
    }

    /// Checks the members of the key type; EC points are checked to lie on the curve.
    private func validateKeyMaterial() throws(JOSEError) {
        switch keyType {
        case .ec:
            let curve = try ecCurve()
            let size = curve.coordinateByteCount
            let x = try bytes("x", length: size), y = try bytes("y", length: size)
            _ = try JOSECrypto.ecPublicKey(x: x, y: y, curve: curve)
            if members["d"] != nil {
                let privateKey = try ecPrivateKey()
                guard privateKey.publicKey.x == x, privateKey.publicKey.y == y else {
                    throw .invalidKey(.privateKeyMismatch)
                }
            }
        case .okp:
            guard let crv = members["crv"]?.stringValue else { throw .invalidKey(.missingMember("crv")) }
            guard crv == "Ed25519" || crv == "X25519" else { throw .unsupportedAlgorithm(.crv, value: crv) }
            _ = try bytes("x", length: 32)
            if members["d"] != nil { _ = try bytes("d", length: 32) }
            if crv == "Ed25519" {
                let publicKey = try JOSECrypto.ed25519PublicKey(try bytes("x", length: 32))
                if members["d"] != nil, try ed25519PrivateKey().publicKey != publicKey {
                    throw .invalidKey(.privateKeyMismatch)
                }
            }
        case .oct:
            let key = try bytes("k")
            guard !key.isEmpty else { throw .invalidKey(.emptySymmetricKey) }
        case .rsa:
            let modulus = try bytes("n"), exponent = try bytes("e")
            guard modulus.first != 0, exponent.first != 0, !exponent.isEmpty, modulus.count >= 256 else {
                throw .invalidKey(.weakRSAKey)
            }
        }
    }

    /// The base64url member `name` decoded (optionally of exactly `length` bytes).
    func bytes(_ name: String, length: Int? = nil) throws(JOSEError) -> [UInt8] {
        guard let text = members[name]?.stringValue else { throw .invalidKey(.missingMember(name)) }
        // Canonical only: unused trailing bits must be zero, so one key has one spelling.
        guard let decoded = Base64URL.decode(text), Base64URL.encode(decoded) == text else {
            throw .invalidKey(.invalidMember(name))
        }
        if let length, decoded.count != length {
            throw .invalidKey(.memberLength(name, expected: length, actual: decoded.count))
        }
        return decoded
    }

    /// The curve of an EC key.
    private func ecCurve() throws(JOSEError) -> ECCurve {
        guard let crv = members["crv"]?.stringValue else { throw .invalidKey(.missingMember("crv")) }
        guard let curve = ECCurve(rawValue: crv) else { throw .unsupportedAlgorithm(.crv, value: crv) }
        return curve
    }

    // MARK: Building

    private init(validated keyType: KeyType, members: JSONObject) {
        self.keyType = keyType
        self.members = members
    }

    /// The public JWK of a `WalletCrypto` public key.
    public init(publicKey: PublicKey) {
        switch publicKey {
        case .ec(let key):
            self.init(validated: .ec, members: [
                "kty": "EC", "crv": .string(key.curve.rawValue),
                "x": .string(Base64URL.encode(key.x)), "y": .string(Base64URL.encode(key.y)),
            ])
        case .ed25519(let key):
            self.init(validated: .okp, members: [
                "kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(JOSECrypto.rawBytes(of: key))),
            ])
        }
    }

    /// The public JWK of an EC public key.
    public init(publicKey: ECPublicKey) { self.init(publicKey: .ec(publicKey)) }

    /// The private JWK of an EC private key (`d` padded to the curve's size).
    public init(privateKey: ECPrivateKey) throws(JOSEError) {
        var members = JWK(publicKey: .ec(privateKey.publicKey)).members
        members["d"] = .string(Base64URL.encode(try JOSECrypto.rawScalar(of: privateKey)))
        self.init(validated: .ec, members: members)
    }

    /// The private JWK of an Ed25519 private key.
    public init(privateKey: Ed25519PrivateKey) throws(JOSEError) {
        var members = JWK(publicKey: .ed25519(privateKey.publicKey)).members
        members["d"] = .string(Base64URL.encode(try JOSECrypto.rawBytes(of: privateKey)))
        self.init(validated: .okp, members: members)
    }

    /// A symmetric (`oct`) JWK holding `key` (for HS256).
    public init(symmetricKey key: SymmetricKey) throws(JOSEError) {
        guard key.byteCount > 0 else { throw .invalidKey(.emptySymmetricKey) }
        let k = key.withUnsafeBytes { Base64URL.encode(Array($0)) }
        self.init(validated: .oct, members: ["kty": "oct", "k": .string(k)])
    }

    /// This key with the members of `parameters` added or replaced (`kid`, `use`,
    /// `alg`, `x5c` ...); the key material itself cannot be changed this way.
    public func adding(_ parameters: JSONObject) throws(JOSEError) -> JWK {
        var merged = members
        for (name, value) in parameters {
            guard !["kty", "crv", "x", "y", "d", "k", "n", "e"].contains(name) else {
                throw .invalidKey(.keyMaterialNotReplaceable(name))
            }
            merged[name] = value
        }
        return try JWK(members: merged)
    }

    // MARK: Members

    /// `kid`, the key identifier.
    public var keyID: String? { members["kid"]?.stringValue }
    /// `use` (`sig` or `enc`).
    public var use: String? { members["use"]?.stringValue }
    /// `alg`, the algorithm the key is meant for.
    public var algorithm: String? { members["alg"]?.stringValue }
    /// `crv`, for EC and OKP keys.
    public var curveName: String? { members["crv"]?.stringValue }
    /// `x5c`, the certificate chain as standard base64 DER strings (leaf first).
    public var x5c: [String]? { members["x5c"]?.arrayValue?.compactMap(\.stringValue) }
    /// Whether private (or symmetric) key material is present.
    public var isPrivate: Bool { !Self.privateMemberNames.isDisjoint(with: members.keys) }

    /// The key without its private members. Symmetric keys have no public form.
    public var publicJWK: JWK {
        get throws(JOSEError) {
            guard keyType != .oct else { throw .invalidKey(.noPublicForm) }
            return JWK(validated: keyType, members: members.filter { !Self.privateMemberNames.contains($0.key) })
        }
    }

    /// The JSON text: members in lexicographic order, no whitespace.
    public var jsonString: String { JSONValue.object(members).canonicalSerialized }
    /// The JSON value of the key.
    public var jsonValue: JSONValue { .object(members) }

    // MARK: Thumbprint (RFC 7638)

    /// The canonical JSON of RFC 7638 §3.2: the required members only, sorted, no whitespace.
    public var thumbprintInput: String {
        let required: [String]
        switch keyType {
        case .ec: required = ["crv", "kty", "x", "y"]
        case .okp: required = ["crv", "kty", "x"]
        case .oct: required = ["k", "kty"]
        case .rsa: required = ["e", "kty", "n"]
        }
        return JSONValue.object(members.filter { required.contains($0.key) }).canonicalSerialized
    }

    /// The RFC 7638 thumbprint: base64url(SHA-256(canonical JSON)).
    public var thumbprint: String { Base64URL.encode(thumbprintBytes) }

    /// The RFC 7638 thumbprint as raw SHA-256 bytes.
    public var thumbprintBytes: [UInt8] { JOSECrypto.sha256(Array(thumbprintInput.utf8)) }

    // MARK: Conversion to WalletCrypto keys

    /// The public key for signature verification or key agreement.
    public func publicKey() throws(JOSEError) -> PublicKey {
        switch keyType {
        case .ec:
            let curve = try ecCurve()
            let size = curve.coordinateByteCount
            return .ec(try JOSECrypto.ecPublicKey(x: try bytes("x", length: size), y: try bytes("y", length: size), curve: curve))
        case .okp:
            guard curveName == "Ed25519" else { throw .unsupportedAlgorithm(.crv, value: curveName ?? "") }
            return .ed25519(try JOSECrypto.ed25519PublicKey(try bytes("x", length: 32)))
        case .oct: throw .invalidKey(.noPublicForm)
        case .rsa: throw .unsupportedAlgorithm(.kty, value: "RSA")
        }
    }

    /// The EC public key (throws for other key types).
    public func ecPublicKey() throws(JOSEError) -> ECPublicKey {
        guard case .ec(let key) = try publicKey() else { throw .invalidKey(.wrongKeyType(expected: .ec)) }
        return key
    }

    /// The EC private key from `d`.
    public func ecPrivateKey() throws(JOSEError) -> ECPrivateKey {
        guard keyType == .ec else { throw .invalidKey(.wrongKeyType(expected: .ec)) }
        guard members["d"] != nil else { throw .missingPrivateKey }
        let curve = try ecCurve()
        return try JOSECrypto.ecPrivateKey(d: try bytes("d", length: curve.coordinateByteCount), curve: curve)
    }

    /// The Ed25519 private key from `d`.
    public func ed25519PrivateKey() throws(JOSEError) -> Ed25519PrivateKey {
        guard keyType == .okp, curveName == "Ed25519" else { throw .invalidKey(.wrongKeyType(expected: .okp)) }
        guard members["d"] != nil else { throw .missingPrivateKey }
        return try JOSECrypto.ed25519PrivateKey(try bytes("d", length: 32))
    }

    /// The symmetric key of an `oct` key.
    public func symmetricKey() throws(JOSEError) -> SymmetricKey {
        guard keyType == .oct else { throw .invalidKey(.wrongKeyType(expected: .oct)) }
        var k = try bytes("k")
        return SymmetricKey(consuming: &k)
    }
}

extension JWK: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The members with private key material (`d`, `k`, the RSA private members) replaced
    /// by `<redacted>`, so that printing or logging a private JWK reveals no key.
    public var description: String {
        var shown = members
        for name in members.keys where Self.privateMemberNames.contains(name) { shown[name] = "<redacted>" }
        return "JWK(\(JSONValue.object(shown).canonicalSerialized))"
    }

    /// Same as ``description``: private members redacted.
    public var debugDescription: String { description }

    /// The key type and the redacted description only, so that `dump` cannot reveal key material.
    public var customMirror: Mirror {
        Mirror(self, children: ["keyType": keyType, "description": description], displayStyle: .struct)
    }
}
