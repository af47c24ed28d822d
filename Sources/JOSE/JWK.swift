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
    /// The public key the members hold (EC and Ed25519 keys), imported once when the members
    /// were validated or built, so that `publicKey()` does not import it again. Not part of
    /// the key's identity: equality and hashing look at the members only.
    private let importedPublicKey: PublicKey?

    /// The members that hold private key material, per key type (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
    private static let privateMemberNames: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    // MARK: Parsing

    /// Parses a JWK from its JSON text.
    public init(json: [UInt8]) throws(JOSEError) {
        try self.init(members: try JSONValue.parseObject(json, what: .jwk))
    }

    /// Parses a JWK from its JSON text.
    public init(json: String) throws(JOSEError) {
        try self.init(json: json.utf8Bytes)
    }

    /// Validates `members` as a JWK.
    public init(members: JSONObject) throws(JOSEError) {
        let keyType = try Self.checkMembers(members)
        self.keyType = keyType
        self.members = members
        self.importedPublicKey = try Self.validateKeyMaterial(keyType: keyType, members: members)
    }

    /// Validates `members` as a JWK that is expected to be the public key `expected` (a holder
    /// checking its own `cnf.jwk`). When the key members spell exactly the public JWK of
    /// `expected`, which is already a validated key, the point is not imported again; any
    /// other members are checked as by `init(members:)`, and any other key is validated in full.
    package init(members: JSONObject, expecting expected: PublicKey) throws(JOSEError) {
        let keyType = try Self.checkMembers(members)
        let spelled = JWK(publicKey: expected).members
        if Self.privateMemberNames.isDisjoint(with: members.keys),
           ["kty", "crv", "x", "y"].allSatisfy({ members[$0] == spelled[$0] }) {
            self.init(validated: keyType, members: members, publicKey: expected)
        } else {
            self.init(validated: keyType, members: members,
                      publicKey: try Self.validateKeyMaterial(keyType: keyType, members: members))
        }
    }

    /// The checks of every JWK that need no key import: `kty`, and the types of `kid`, `use`,
    /// `alg` and `x5c`.
    private static func checkMembers(_ members: JSONObject) throws(JOSEError) -> KeyType {
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
        return keyType
    }

    /// Checks the members of the key type; EC points are checked to lie on the curve.
    /// Returns the public key it imported (EC and Ed25519 keys).
    private static func validateKeyMaterial(keyType: KeyType, members: JSONObject) throws(JOSEError) -> PublicKey? {
        // A key without its cache: the member readers below need only `members`.
        let key = JWK(validated: keyType, members: members, publicKey: nil)
        switch keyType {
        case .ec:
            let curve = try key.ecCurve()
            let size = curve.coordinateByteCount
            let x = try key.bytes("x", length: size), y = try key.bytes("y", length: size)
            let publicKey = try JOSECrypto.ecPublicKey(x: x, y: y, curve: curve)
            if members["d"] != nil {
                let privateKey = try key.ecPrivateKey()
                guard privateKey.publicKey.x == x, privateKey.publicKey.y == y else {
                    throw .invalidKey(.privateKeyMismatch)
                }
            }
            return .ec(publicKey)
        case .okp:
            guard let crv = members["crv"]?.stringValue else { throw .invalidKey(.missingMember("crv")) }
            guard crv == "Ed25519" || crv == "X25519" else { throw .unsupportedAlgorithm(.crv, value: crv) }
            _ = try key.bytes("x", length: 32)
            if members["d"] != nil { _ = try key.bytes("d", length: 32) }
            guard crv == "Ed25519" else { return nil }
            let publicKey = try JOSECrypto.ed25519PublicKey(try key.bytes("x", length: 32))
            if members["d"] != nil, try key.ed25519PrivateKey().publicKey != publicKey {
                throw .invalidKey(.privateKeyMismatch)
            }
            return .ed25519(publicKey)
        case .oct:
            let symmetric = try key.bytes("k")
            guard !symmetric.isEmpty else { throw .invalidKey(.emptySymmetricKey) }
            return nil
        case .rsa:
            let modulus = try key.bytes("n"), exponent = try key.bytes("e")
            guard modulus.first != 0, exponent.first != 0, !exponent.isEmpty, modulus.count >= 256 else {
                throw .invalidKey(.weakRSAKey)
            }
            return nil
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

    private init(validated keyType: KeyType, members: JSONObject, publicKey: PublicKey?) {
        self.keyType = keyType
        self.members = members
        self.importedPublicKey = publicKey
    }

    /// Keys are equal when their members are (the imported key follows from them).
    public static func == (lhs: JWK, rhs: JWK) -> Bool {
        lhs.keyType == rhs.keyType && lhs.members == rhs.members
    }

    /// Hashes the key type and the members.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyType)
        hasher.combine(members)
    }

    /// The public JWK of a `WalletCrypto` public key.
    public init(publicKey: PublicKey) {
        switch publicKey {
        case .ec(let key):
            self.init(validated: .ec, members: [
                "kty": "EC", "crv": .string(key.curve.rawValue),
                "x": .string(Base64URL.encode(key.x)), "y": .string(Base64URL.encode(key.y)),
            ], publicKey: publicKey)
        case .ed25519(let key):
            self.init(validated: .okp, members: [
                "kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(JOSECrypto.rawBytes(of: key))),
            ], publicKey: publicKey)
        }
    }

    /// The public JWK of an EC public key.
    public init(publicKey: ECPublicKey) { self.init(publicKey: .ec(publicKey)) }

    /// The private JWK of an EC private key (`d` padded to the curve's size).
    public init(privateKey: ECPrivateKey) throws(JOSEError) {
        var members = JWK(publicKey: .ec(privateKey.publicKey)).members
        members["d"] = .string(Base64URL.encode(try JOSECrypto.rawScalar(of: privateKey)))
        self.init(validated: .ec, members: members, publicKey: .ec(privateKey.publicKey))
    }

    /// The private JWK of an Ed25519 private key.
    public init(privateKey: Ed25519PrivateKey) throws(JOSEError) {
        var members = JWK(publicKey: .ed25519(privateKey.publicKey)).members
        members["d"] = .string(Base64URL.encode(try JOSECrypto.rawBytes(of: privateKey)))
        self.init(validated: .okp, members: members, publicKey: .ed25519(privateKey.publicKey))
    }

    /// A symmetric (`oct`) JWK holding `key` (for HS256).
    public init(symmetricKey key: SymmetricKey) throws(JOSEError) {
        guard key.byteCount > 0 else { throw .invalidKey(.emptySymmetricKey) }
        let k = key.withUnsafeBytes { Base64URL.encode(Array($0)) }
        self.init(validated: .oct, members: ["kty": "oct", "k": .string(k)], publicKey: nil)
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
            return JWK(validated: keyType, members: members.filter { !Self.privateMemberNames.contains($0.key) },
                       publicKey: importedPublicKey)
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
    public var thumbprintBytes: [UInt8] { JOSECrypto.sha256(thumbprintInput.utf8Bytes) }

    // MARK: Conversion to WalletCrypto keys

    /// The public key for signature verification or key agreement.
    public func publicKey() throws(JOSEError) -> PublicKey {
        if let importedPublicKey { return importedPublicKey }
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
