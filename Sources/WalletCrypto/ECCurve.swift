internal import COpenSSL

/// A NIST prime curve supported for ECDSA and ECDH. Raw values are the JOSE/COSE curve names.
public enum ECCurve: String, Sendable, CaseIterable {
    /// NIST P-256 (secp256r1, prime256v1).
    case p256 = "P-256"
    /// NIST P-384 (secp384r1).
    case p384 = "P-384"
    /// NIST P-521 (secp521r1).
    case p521 = "P-521"

    /// The byte length of one field element (a coordinate), of the private scalar, and of
    /// each half of a raw r||s signature: 32, 48 or 66.
    public var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    /// The hash ECDSA uses with this curve by default (ES256/ES384/ES512).
    public var signatureHashAlgorithm: HashAlgorithm {
        switch self {
        case .p256: .sha256
        case .p384: .sha384
        case .p521: .sha512
        }
    }

    /// The OpenSSL group name.
    var groupName: String {
        switch self {
        case .p256: "prime256v1"
        case .p384: "secp384r1"
        case .p521: "secp521r1"
        }
    }

    /// The OpenSSL NID of the curve.
    var nid: Int32 {
        switch self {
        case .p256: NID_X9_62_prime256v1
        case .p384: NID_secp384r1
        case .p521: NID_secp521r1
        }
    }

    /// The curve for an OpenSSL group name, or nil for any other group.
    init?(groupName: String) {
        switch groupName {
        case "prime256v1", "P-256", "secp256r1": self = .p256
        case "secp384r1", "P-384": self = .p384
        case "secp521r1", "P-521": self = .p521
        default: return nil
        }
    }

    /// The curve of an EC `EVP_PKEY`, or a typed error for other key types and curves.
    init(of key: EVPKey) throws(CryptoError) {
        guard key.isA("EC"), let name = key.utf8Parameter("group"), let curve = ECCurve(groupName: name) else {
            throw .unsupportedKey(expected: .ec)
        }
        self = curve
    }

    /// Imports a public point (SEC1, compressed or uncompressed) on this curve and validates it.
    ///
    /// The key starts as a copy of the curve's parameters-only key, made once per process:
    /// building the group from its name costs several times the point check itself
    /// (`EVP_PKEY_fromdata` was 200 k instructions per import, issue 16).
    ///
    /// The one-byte point at infinity is refused here. Setting any other point decodes it
    /// with `EC_POINT_oct2point`, which refuses a point off the curve (the affine
    /// coordinates are checked against the equation), so no separate public-key check
    /// follows: `EVP_PKEY_public_check_quick` would test the same equation again and cost
    /// as much as the import (a context per key; 39% of the import in perf).
    func importPublicPoint(_ point: [UInt8]) throws(CryptoError) -> EVPKey {
        guard point.count > 1 else { throw .invalidKey(.notOnCurve) }    // 0x00: the point at infinity
        guard let template = CurveParameters.key(for: self), let copy = EVP_PKEY_dup(template.pointer) else {
            return try importPublicPointFromData(point)
        }
        let key = EVPKey(taking: copy)
        let set = point.withUnsafeBufferPointer { buffer in
            EVP_PKEY_set1_encoded_public_key(copy, buffer.baseAddress, buffer.count)
        }
        guard set == 1 else {
            ERR_clear_error()
            throw .invalidKey(.notOnCurve)
        }
        return key
    }

    /// Imports a public point by building the key from the group name and the point.
    func importPublicPointFromData(_ point: [UInt8]) throws(CryptoError) -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw backendError(.keyImport) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { throw backendError(.keyImport) }
        var imported: OpaquePointer? = nil
        try withOSSLParams([.utf8("group", groupName), .octets("pub", point)], for: .keyImport) {
            (params) throws(CryptoError) in
            guard EVP_PKEY_fromdata(context, &imported, wallet_EVP_PKEY_PUBLIC_KEY(), params) == 1 else {
                ERR_clear_error()
                throw .invalidKey(.notOnCurve)
            }
        }
        guard let imported else { throw backendError(.keyImport) }
        let key = EVPKey(taking: imported)
        try key.checkPublicKey()
        return key
    }

    /// Imports a private scalar `d` (exactly `coordinateByteCount` bytes, 0 < d < n), computing
    /// the public point d·G with `EC_POINT_mul`. Returns the key pair and that point
    /// (uncompressed).
    func importPrivateScalar(_ scalar: [UInt8]) throws(CryptoError) -> (key: EVPKey, point: [UInt8]) {
        guard scalar.count == coordinateByteCount else { throw .invalidLength(.ecPrivateScalar(self), actual: scalar.count) }
        // The curve's group is built once (a fifth of an import when built per call); libcrypto
        // only reads it here (`const EC_GROUP *`), so one group serves every thread.
        guard let group = CurveParameters.group(for: self) else { throw backendError(.keyImport) }
        guard let order = EC_GROUP_get0_order(group) else { throw backendError(.keyImport) }
        guard let bnContext = BN_CTX_secure_new() else { throw backendError(.keyImport) }
        defer { BN_CTX_free(bnContext) }
        guard let d = BN_secure_new() else { throw backendError(.keyImport) }
        defer { BN_clear_free(d) }
        guard withBytes(scalar, { pointer, count in BN_bin2bn(pointer, Int32(count), d) }) != nil else {
            throw backendError(.keyImport)
        }
        guard BN_is_zero(d) == 0, BN_cmp(d, order) < 0 else { throw .invalidKey(.scalarOutOfRange) }
        guard let point = EC_POINT_new(group) else { throw backendError(.keyImport) }
        defer { EC_POINT_clear_free(point) }
        guard EC_POINT_mul(group, point, d, nil, nil, bnContext) == 1 else { throw backendError(.keyImport) }
        var encoded = [UInt8](repeating: 0, count: 1 + 2 * coordinateByteCount)
        guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, encoded.count, bnContext)
            == encoded.count
        else { throw backendError(.keyImport) }

        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw backendError(.keyImport) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { throw backendError(.keyImport) }
        var imported: OpaquePointer? = nil
        try withOSSLParams([
            .utf8("group", groupName), .unsignedInteger("priv", scalar), .octets("pub", encoded),
        ], for: .keyImport) { (params) throws(CryptoError) in
            guard EVP_PKEY_fromdata(context, &imported, wallet_EVP_PKEY_KEYPAIR(), params) == 1 else {
                ERR_clear_error()
                throw .invalidKey(.malformed)
            }
        }
        guard let imported else { throw backendError(.keyImport) }
        return (EVPKey(taking: imported), encoded)
    }

    /// Generates a fresh key pair on this curve.
    func generateKey() throws(CryptoError) -> EVPKey {
        // From the curve's parameters-only key when there is one: the generation copies its
        // group, where a group name makes libcrypto build the group afresh (its Montgomery
        // set-up most) on every key.
        if let template = CurveParameters.key(for: self),
           let context = EVP_PKEY_CTX_new_from_pkey(nil, template.pointer, nil) {
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_keygen_init(context) == 1 else { throw backendError(.keyGeneration) }
            return try generate(with: context)
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw backendError(.keyGeneration) }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw backendError(.keyGeneration) }
        guard EVP_PKEY_CTX_set_group_name(context, groupName) == 1 else { throw backendError(.keyGeneration) }
        return try generate(with: context)
    }

    /// Runs a prepared key-generation context.
    private func generate(with context: OpaquePointer) throws(CryptoError) -> EVPKey {
        var generated: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &generated) == 1, let generated else {
            throw backendError(.keyGeneration)
        }
        return EVPKey(taking: generated)
    }
}

/// What the SDK builds once per curve (three per process, never freed): a parameters-only
/// key (the group, no point), which imported public points and generated keys start from,
/// and the curve's `EC_GROUP`, for d·G of an imported private scalar (libcrypto takes the
/// group as `const` in every call the SDK makes with it, so one serves every thread).
final class CurveParameters: @unchecked Sendable {
    private let key: EVPKey?
    private let group: OpaquePointer?

    private init(_ curve: ECCurve) {
        key = Self.make(curve)
        group = EC_GROUP_new_by_curve_name(curve.nid)
    }

    private static let p256 = CurveParameters(.p256)
    private static let p384 = CurveParameters(.p384)
    private static let p521 = CurveParameters(.p521)

    private static func of(_ curve: ECCurve) -> CurveParameters {
        switch curve {
        case .p256: p256
        case .p384: p384
        case .p521: p521
        }
    }

    /// The curve's parameters-only key.
    static func key(for curve: ECCurve) -> EVPKey? { of(curve).key }

    /// The curve's group.
    static func group(for curve: ECCurve) -> OpaquePointer? { of(curve).group }

    private static func make(_ curve: ECCurve) -> EVPKey? {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { return nil }
        var made: OpaquePointer? = nil
        let built = try? withOSSLParams([.utf8("group", curve.groupName)], for: .keyImport) {
            (params) throws(CryptoError) -> Bool in
            EVP_PKEY_fromdata(context, &made, wallet_EVP_PKEY_KEY_PARAMETERS(), params) == 1
        }
        guard built == true, let made else {
            ERR_clear_error()
            return nil
        }
        return EVPKey(taking: made)
    }
}
