import CBOR
import WalletCrypto
import WalletEncoding

/// A COSE_Key (RFC 9052 §7, RFC 9053 §7): an EC2 key on P-256/P-384/P-521, an OKP
/// Ed25519 key, or a symmetric key.
///
/// COSE_Key and JWK are converted into one another through the `WalletCrypto` key
/// types (`PublicKey`, `ECPrivateKey`, `Ed25519PrivateKey`), since `COSE` and `JOSE`
/// sit side by side and do not import each other.
///
/// Private (`d`) and symmetric (`k`) material is held in ordinary arrays, as the encoded
/// key holds it; `description`, `debugDescription` and the mirror never show it.
public struct COSEKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key type (`kty`, label 1).
    public enum KeyType: Int, Hashable, Sendable {
        /// Octet key pair (Ed25519 here).
        case okp = 1
        /// Elliptic curve key with x and y coordinates.
        case ec2 = 2
        /// Symmetric key.
        case symmetric = 4
    }

    /// The curve (`crv`, label -1) of an EC2 or OKP key.
    public enum Curve: Int, Hashable, Sendable {
        /// NIST P-256 (EC2).
        case p256 = 1
        /// NIST P-384 (EC2).
        case p384 = 2
        /// NIST P-521 (EC2).
        case p521 = 3
        /// Ed25519 (OKP).
        case ed25519 = 6

        /// The matching `WalletCrypto` curve for the EC2 curves.
        public var ecCurve: ECCurve? {
            switch self {
            case .p256: .p256
            case .p384: .p384
            case .p521: .p521
            case .ed25519: nil
            }
        }

        /// The COSE curve of a `WalletCrypto` curve.
        public init(_ curve: ECCurve) {
            switch curve {
            case .p256: self = .p256
            case .p384: self = .p384
            case .p521: self = .p521
            }
        }
    }

    /// A permitted operation (`key_ops`, label 4).
    public enum KeyOperation: Int, Hashable, Sendable {
        /// Compute a signature.
        case sign = 1
        /// Verify a signature.
        case verify = 2
        /// Encrypt content.
        case encrypt = 3
        /// Decrypt content.
        case decrypt = 4
        /// Wrap a key.
        case wrapKey = 5
        /// Unwrap a key.
        case unwrapKey = 6
        /// Derive a key.
        case deriveKey = 7
        /// Derive bits not used as a key.
        case deriveBits = 8
        /// Create a MAC.
        case macCreate = 9
        /// Verify a MAC.
        case macVerify = 10
    }

    /// The y coordinate of an EC2 key: the full value, or only its sign bit (point
    /// compression, RFC 9053 §7.1.1).
    public enum YCoordinate: Hashable, Sendable {
        /// The y coordinate, left-padded to the curve's length.
        case value([UInt8])
        /// The least significant bit of y.
        case signBit(Bool)
    }

    /// The type-specific parameters.
    public enum Parameters: Hashable, Sendable {
        /// kty 2: curve, x, y and optionally the private scalar d.
        case ec2(curve: Curve, x: [UInt8], y: YCoordinate, d: [UInt8]?)
        /// kty 1: curve, x (the public key) and optionally the private key d.
        case okp(curve: Curve, x: [UInt8], d: [UInt8]?)
        /// kty 4: the key value k.
        case symmetric(k: [UInt8])
    }

    /// The key material.
    public let parameters: Parameters
    /// `kid` (label 2).
    public var keyID: [UInt8]?
    /// `alg` (label 3), an integer algorithm identifier.
    public var algorithmIdentifier: Int?
    /// `key_ops` (label 4).
    public var keyOperations: [KeyOperation]?
    /// The public key the parameters were validated as (EC2 and OKP), kept so that
    /// ``publicKey()`` does not import the point again. Not part of equality: it follows
    /// from `parameters`.
    private var validated: ValidatedPublicKey?

    /// A reference to the validated key (one pointer in the value).
    private final class ValidatedPublicKey: Sendable {
        let key: PublicKey
        init(_ key: PublicKey) { self.key = key }
    }

    /// Creates a key from parameters, checking lengths and that EC/Ed25519 public keys are
    /// valid points.
    /// - Throws: `invalidKey` when the parameters are inconsistent.
    public init(parameters: Parameters, keyID: [UInt8]? = nil, algorithmIdentifier: Int? = nil,
                keyOperations: [KeyOperation]? = nil) throws(COSEError) {
        self.parameters = parameters
        self.keyID = keyID
        self.algorithmIdentifier = algorithmIdentifier
        self.keyOperations = keyOperations
        validated = try validate().map(ValidatedPublicKey.init)
    }

    /// The key type.
    public var keyType: KeyType {
        switch parameters {
        case .ec2: .ec2
        case .okp: .okp
        case .symmetric: .symmetric
        }
    }

    /// The curve of an EC2 or OKP key.
    public var curve: Curve? {
        switch parameters {
        case .ec2(let curve, _, _, _), .okp(let curve, _, _): curve
        case .symmetric: nil
        }
    }

    /// True when the key holds private material (`d`) or is symmetric.
    public var hasPrivateMaterial: Bool {
        switch parameters {
        case .ec2(_, _, _, let d), .okp(_, _, let d): d != nil
        case .symmetric: true
        }
    }

    /// The key value of a symmetric key.
    public var symmetricKey: SymmetricKey? {
        if case .symmetric(let k) = parameters { return SymmetricKey(bytes: k) }
        return nil
    }

    /// The same key without its private scalar (a symmetric key is returned unchanged).
    public var publicOnly: COSEKey {
        var copy = self
        switch parameters {
        case .ec2(let curve, let x, let y, _): copy = COSEKey(unchecked: .ec2(curve: curve, x: x, y: y, d: nil), from: self)
        case .okp(let curve, let x, _): copy = COSEKey(unchecked: .okp(curve: curve, x: x, d: nil), from: self)
        case .symmetric: break
        }
        return copy
    }

    private init(unchecked parameters: Parameters, from other: COSEKey) {
        self.parameters = parameters
        keyID = other.keyID
        algorithmIdentifier = other.algorithmIdentifier
        keyOperations = other.keyOperations
        validated = other.validated
    }

    /// Equal when parameters, `kid`, `alg` and `key_ops` are.
    public static func == (lhs: COSEKey, rhs: COSEKey) -> Bool {
        lhs.parameters == rhs.parameters && lhs.keyID == rhs.keyID
            && lhs.algorithmIdentifier == rhs.algorithmIdentifier && lhs.keyOperations == rhs.keyOperations
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(parameters)
        hasher.combine(keyID)
        hasher.combine(algorithmIdentifier)
        hasher.combine(keyOperations)
    }

    /// A description that names the key type and curve but never prints key material.
    public var description: String {
        let kid = keyID.map { " kid=\(Hex.encode($0))" } ?? ""
        return "COSEKey(\(keyType)\(curve.map { " \($0)" } ?? "")\(hasPrivateMaterial ? " private" : "")\(kid))"
    }

    /// Same as ``description``: never key material.
    public var debugDescription: String { description }

    /// A mirror without children, so `dump` cannot reveal private or symmetric key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    // MARK: Parsing and serialization

    /// Parses an encoded COSE_Key.
    /// - Throws: `cbor` for bad CBOR, `invalidKey` for a bad key.
    public init(encoded bytes: [UInt8]) throws(COSEError) {
        let value: CBOR
        do { value = try CBOR.decode(bytes, options: COSEDecoding.options) } catch { throw .cbor(error) }
        try self.init(cbor: value)
    }

    /// Reads a COSE_Key from a decoded CBOR map.
    /// - Throws: `invalidKey` for a missing or unsupported `kty`/`crv`, wrong lengths,
    ///   wrongly typed parameters, or a point not on its curve.
    public init(cbor: CBOR) throws(COSEError) {
        guard case .map(let map) = cbor else { throw .invalidKey(.notAMap) }
        func bytes(_ label: Int, _ name: String) throws(COSEError) -> [UInt8]? {
            guard let value = map[CBOR(label)] else { return nil }
            guard case .byteString(let bytes) = value else { throw .invalidKey(.invalidParameter(name)) }
            return bytes
        }
        func required(_ label: Int, _ name: String) throws(COSEError) -> [UInt8] {
            guard let value = try bytes(label, name) else { throw .invalidKey(.missingParameter(name)) }
            return value
        }
        guard let ktyValue = map[CBOR(1)] else { throw .invalidKey(.missingParameter("kty")) }
        guard let ktyNumber = ktyValue.intValue, let kty = KeyType(rawValue: ktyNumber) else {
            throw .invalidKey(.unsupportedKeyType)
        }
        let keyID = try bytes(2, "kid")
        var algorithm: Int?
        if let value = map[CBOR(3)] {
            guard let number = value.intValue else { throw .invalidKey(.invalidParameter("alg")) }
            algorithm = number
        }
        var operations: [KeyOperation]?
        if let value = map[CBOR(4)] {
            guard let items = value.arrayValue, !items.isEmpty else { throw .invalidKey(.invalidParameter("key_ops")) }
            var parsed: [KeyOperation] = []
            for item in items {
                guard let number = item.intValue, let operation = KeyOperation(rawValue: number) else {
                    throw .invalidKey(.unsupportedKeyOperation)
                }
                parsed.append(operation)
            }
            operations = parsed
        }
        let parameters: Parameters
        switch kty {
        case .ec2, .okp:
            guard let crvValue = map[CBOR(-1)] else { throw .invalidKey(.missingParameter("crv")) }
            guard let crvNumber = crvValue.intValue, let curve = Curve(rawValue: crvNumber) else {
                throw .invalidKey(.unsupportedCurve)
            }
            let x = try required(-2, "x")
            let d = try bytes(-4, "d")
            if kty == .ec2 {
                let y: YCoordinate
                switch map[CBOR(-3)] {
                case .byteString(let value): y = .value(value)
                case .boolean(let bit): y = .signBit(bit)
                case nil: throw .invalidKey(.missingParameter("y"))
                default: throw .invalidKey(.invalidParameter("y"))
                }
                parameters = .ec2(curve: curve, x: x, y: y, d: d)
            } else {
                parameters = .okp(curve: curve, x: x, d: d)
            }
        case .symmetric:
            parameters = .symmetric(k: try required(-1, "k"))
        }
        try self.init(parameters: parameters, keyID: keyID, algorithmIdentifier: algorithm, keyOperations: operations)
    }

    /// The key as a CBOR map.
    public var cbor: CBOR {
        var map = CBORMap()
        map[CBOR(1)] = CBOR(keyType.rawValue)
        if let keyID { map[CBOR(2)] = .byteString(keyID) }
        if let algorithmIdentifier { map[CBOR(3)] = CBOR(algorithmIdentifier) }
        if let keyOperations { map[CBOR(4)] = .array(keyOperations.map { CBOR($0.rawValue) }) }
        switch parameters {
        case .ec2(let curve, let x, let y, let d):
            map[CBOR(-1)] = CBOR(curve.rawValue)
            map[CBOR(-2)] = .byteString(x)
            switch y {
            case .value(let bytes): map[CBOR(-3)] = .byteString(bytes)
            case .signBit(let bit): map[CBOR(-3)] = .boolean(bit)
            }
            if let d { map[CBOR(-4)] = .byteString(d) }
        case .okp(let curve, let x, let d):
            map[CBOR(-1)] = CBOR(curve.rawValue)
            map[CBOR(-2)] = .byteString(x)
            if let d { map[CBOR(-4)] = .byteString(d) }
        case .symmetric(let k):
            map[CBOR(-1)] = .byteString(k)
        }
        return .map(map)
    }

    /// The key in core deterministic encoding (RFC 8949 §4.2.1: labels sorted by their
    /// encoded bytes, so 1, 2, 3, 4, -1, -2, -3, -4).
    public func encoded() -> [UInt8] {
        cbor.encoded(options: .deterministic)
    }

    // MARK: WalletCrypto keys

    /// Creates the COSE_Key of a public key (EC2 with both coordinates, or OKP Ed25519).
    public init(publicKey: PublicKey, keyID: [UInt8]? = nil, algorithm: COSEAlgorithm? = nil) {
        switch publicKey {
        case .ec(let key):
            parameters = .ec2(curve: Curve(key.curve), x: key.x, y: .value(key.y), d: nil)
        case .ed25519(let key):
            parameters = .okp(curve: .ed25519, x: key.rawRepresentation, d: nil)
        }
        self.keyID = keyID
        algorithmIdentifier = algorithm?.rawValue
        keyOperations = nil
        validated = ValidatedPublicKey(publicKey)
    }

    /// Creates the COSE_Key of an EC private key (with its public coordinates).
    /// - Throws: `crypto` when the scalar cannot be exported.
    public init(privateKey: ECPrivateKey, keyID: [UInt8]? = nil, algorithm: COSEAlgorithm? = nil) throws(COSEError) {
        let scalar = try Self.crypto { () throws(CryptoError) in try privateKey.rawScalar() }
        parameters = .ec2(curve: Curve(privateKey.curve), x: privateKey.publicKey.x,
                          y: .value(privateKey.publicKey.y), d: scalar)
        self.keyID = keyID
        algorithmIdentifier = algorithm?.rawValue
        keyOperations = nil
    }

    /// Creates the COSE_Key of an Ed25519 private key (with its public key).
    /// - Throws: `crypto` when the key cannot be exported.
    public init(privateKey: Ed25519PrivateKey, keyID: [UInt8]? = nil, algorithm: COSEAlgorithm? = nil) throws(COSEError) {
        let raw = try Self.crypto { () throws(CryptoError) in try privateKey.rawRepresentation() }
        parameters = .okp(curve: .ed25519, x: privateKey.publicKey.rawRepresentation, d: raw)
        self.keyID = keyID
        algorithmIdentifier = algorithm?.rawValue
        keyOperations = nil
    }

    /// Creates a symmetric COSE_Key (kty 4).
    /// - Throws: `invalidKey` for an empty key.
    public init(symmetricKey: SymmetricKey, keyID: [UInt8]? = nil, algorithm: COSEAlgorithm? = nil) throws(COSEError) {
        let k = symmetricKey.withUnsafeBytes { Array($0) }
        try self.init(parameters: .symmetric(k: k), keyID: keyID, algorithmIdentifier: algorithm?.rawValue)
    }

    /// The public key of an EC2 or OKP key (a compressed EC2 point is decompressed).
    /// - Throws: `invalidKey` for a symmetric key or a point not on the curve.
    public func publicKey() throws(COSEError) -> PublicKey {
        if let validated { return validated.key }
        return try Self.importPublicKey(parameters)
    }

    /// Imports and validates the public key of EC2 or OKP parameters.
    private static func importPublicKey(_ parameters: Parameters) throws(COSEError) -> PublicKey {
        switch parameters {
        case .ec2(let curve, let x, let y, _):
            guard let ecCurve = curve.ecCurve else { throw .invalidKey(.unsupportedCurve) }
            let point: [UInt8]
            switch y {
            case .value(let yBytes): point = [0x04] + x + yBytes
            case .signBit(let odd): point = [odd ? 0x03 : 0x02] + x
            }
            do { return .ec(try ECPublicKey(x963Representation: point, curve: ecCurve)) } catch {
                throw .invalidKey(.invalidPublicKey)
            }
        case .okp(let curve, let x, _):
            guard curve == .ed25519 else { throw .invalidKey(.unsupportedCurve) }
            do { return .ed25519(try Ed25519PublicKey(rawRepresentation: x)) } catch {
                throw .invalidKey(.invalidPublicKey)
            }
        case .symmetric:
            throw .invalidKey(.wrongKeyType(expected: .ec2))
        }
    }

    /// The EC private key of an EC2 key with `d`, checked against its public coordinates.
    /// - Throws: `invalidKey` when `d` is absent, invalid, or does not match x/y.
    public func ecPrivateKey() throws(COSEError) -> ECPrivateKey {
        guard case .ec2(let curve, _, _, let d) = parameters, let d, let ecCurve = curve.ecCurve else {
            throw .invalidKey(.wrongKeyType(expected: .ec2))
        }
        let key: ECPrivateKey
        do { key = try ECPrivateKey(d: d, curve: ecCurve) } catch { throw .invalidKey(.invalidPrivateKey) }
        guard case .ec(key.publicKey) = try publicKey() else { throw .invalidKey(.privateKeyMismatch) }
        return key
    }

    /// The Ed25519 private key of an OKP key with `d`, checked against `x`.
    /// - Throws: `invalidKey` when `d` is absent, invalid, or does not match x.
    public func ed25519PrivateKey() throws(COSEError) -> Ed25519PrivateKey {
        guard case .okp(.ed25519, let x, let d) = parameters, let d else {
            throw .invalidKey(.wrongKeyType(expected: .okp))
        }
        let key: Ed25519PrivateKey
        do { key = try Ed25519PrivateKey(rawRepresentation: d) } catch { throw .invalidKey(.invalidPrivateKey) }
        guard key.publicKey.rawRepresentation == x else { throw .invalidKey(.privateKeyMismatch) }
        return key
    }

    /// A software signer over this private key, for ES256/384/512 (by curve) or EdDSA.
    /// - Throws: `invalidKey` without private material; `algorithmKeyMismatch` when the
    ///   key's `alg` differs from what its curve signs with.
    public func signer() throws(COSEError) -> SoftwareSigner {
        let signer: SoftwareSigner
        switch parameters {
        case .ec2: signer = SoftwareSigner(try ecPrivateKey())
        case .okp: signer = SoftwareSigner(try ed25519PrivateKey())
        case .symmetric: throw .invalidKey(.wrongKeyType(expected: .ec2))
        }
        if let algorithmIdentifier, algorithmIdentifier != COSEAlgorithm(signer.algorithm).rawValue {
            throw .algorithmKeyMismatch
        }
        return signer
    }

    /// The secret of a symmetric key for `algorithm`, honouring the key's `alg`.
    func macKey(for algorithm: COSEAlgorithm) throws(COSEError) -> SymmetricKey {
        guard case .symmetric(let k) = parameters, algorithm.isMAC else { throw .algorithmKeyMismatch }
        if let algorithmIdentifier, algorithmIdentifier != algorithm.rawValue { throw .algorithmKeyMismatch }
        return SymmetricKey(bytes: k)
    }

    // MARK: Validation

    /// Checks the parameters; returns the public key of EC2 and OKP keys.
    private func validate() throws(COSEError) -> PublicKey? {
        switch parameters {
        case .ec2(let curve, let x, let y, let d):
            guard let ecCurve = curve.ecCurve else { throw .invalidKey(.unsupportedCurve) }
            let n = ecCurve.coordinateByteCount
            guard x.count == n else { throw .invalidKey(.parameterLength("x", expected: n, actual: x.count)) }
            if case .value(let yBytes) = y, yBytes.count != n {
                throw .invalidKey(.parameterLength("y", expected: n, actual: yBytes.count))
            }
            if let d, d.count != n { throw .invalidKey(.parameterLength("d", expected: n, actual: d.count)) }
            return try Self.importPublicKey(parameters)
        case .okp(let curve, let x, let d):
            guard curve == .ed25519 else { throw .invalidKey(.unsupportedCurve) }
            guard x.count == 32 else { throw .invalidKey(.parameterLength("x", expected: 32, actual: x.count)) }
            if let d, d.count != 32 { throw .invalidKey(.parameterLength("d", expected: 32, actual: d.count)) }
            return try Self.importPublicKey(parameters)
        case .symmetric(let k):
            guard !k.isEmpty else { throw .invalidKey(.emptySymmetricKey) }
            return nil
        }
    }

    private static func crypto<T>(_ body: () throws(CryptoError) -> T) throws(COSEError) -> T {
        do { return try body() } catch { throw .crypto(error) }
    }
}
