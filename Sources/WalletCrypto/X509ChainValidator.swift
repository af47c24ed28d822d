internal import COpenSSL
import Foundation
import WalletEncoding

/// Validates X.509 certificate paths with OpenSSL's `X509_verify_cert` against a
/// fixed set of trust anchors, at a caller-given time (never the system clock), then
/// checks the caller's `X509TrustPolicy` on the validated path.
///
/// No TLS purpose is checked by OpenSSL: the policy says what the certificate may be
/// used for (the ISO 18013-5 document signer and reader extended key usages, SD-JWT VC
/// issuer names, OpenID4VP client identifiers ...). Every failure is a `TrustFailure`.
public struct X509ChainValidator: Sendable {
    /// Verification settings.
    public struct Options: Sendable, Hashable {
        /// Apply OpenSSL's `X509_V_FLAG_X509_STRICT` RFC 5280 profile checks
        /// (e.g. authorityKeyIdentifier present, CA certificates with keyCertSign,
        /// no explicit EC parameters). The ISO 18013-5 Annex D chains pass them.
        public var strict: Bool
        /// Accept a trusted intermediate or the leaf itself as the anchor
        /// (`X509_V_FLAG_PARTIAL_CHAIN`); when false, the path must end at a
        /// self-signed anchor.
        public var allowPartialChain: Bool
        /// OpenSSL's verify depth: the maximum number of intermediate CA
        /// certificates between the leaf and the anchor; nil keeps OpenSSL's default (100).
        public var maximumIntermediates: Int?

        /// Options; the defaults are strict checks, partial chains allowed, no extra depth limit.
        public init(strict: Bool = true, allowPartialChain: Bool = true, maximumIntermediates: Int? = nil) {
            self.strict = strict
            self.allowPartialChain = allowPartialChain
            self.maximumIntermediates = maximumIntermediates
        }
    }

    /// The trusted certificates (IACA roots, reader roots, or trusted intermediates).
    public let anchors: [X509Certificate]
    /// The verification settings.
    public let options: Options

    /// A validator trusting `anchors`.
    public init(anchors: [X509Certificate], options: Options = Options()) {
        self.anchors = anchors
        self.options = options
    }

    /// Validates `leaf` at `time`, building the path through any of `intermediates`
    /// (untrusted, in any order) to one of the anchors, then checks `policy` on the path.
    ///
    /// - Returns: the validated path, leaf first and the anchor last.
    /// - Throws: the `TrustFailure` of path validation or of the first policy rule broken.
    public func validate(leaf: X509Certificate, intermediates: [X509Certificate] = [], at time: Date,
                         policy: X509TrustPolicy) throws(TrustFailure) -> ValidatedChain {
        let chain = ValidatedChain(path: try path(leaf: leaf, intermediates: intermediates, at: time), validationTime: time)
        try policy.check(chain)
        return chain
    }

    /// Validates an x5c-style chain: `chain[0]` is the leaf, the rest are untrusted
    /// intermediates. Throws `missingCertificate` for an empty array.
    public func validate(chain: [X509Certificate], at time: Date, policy: X509TrustPolicy) throws(TrustFailure) -> ValidatedChain {
        guard let leaf = chain.first else { throw .missingCertificate }
        return try validate(leaf: leaf, intermediates: Array(chain.dropFirst()), at: time, policy: policy)
    }

    /// Parses and validates a chain of DER certificates as received (a COSE `x5chain`, the
    /// decoded JOSE `x5c`), leaf first. A certificate that does not parse is
    /// `malformedCertificate` with its index; an empty chain is `missingCertificate`.
    public func validate(chainDER: [[UInt8]], at time: Date, policy: X509TrustPolicy) throws(TrustFailure) -> ValidatedChain {
        var chain: [X509Certificate] = []
        for (index, der) in chainDER.enumerated() {
            do { chain.append(try X509Certificate(derEncoded: der)) } catch { throw .malformedCertificate(index: index) }
        }
        return try validate(chain: chain, at: time, policy: policy)
    }

    /// RFC 5280 path validation by OpenSSL.
    private func path(leaf: X509Certificate, intermediates: [X509Certificate], at time: Date) throws(TrustFailure) -> [X509Certificate] {
        guard !anchors.isEmpty else { throw .noTrustAnchors }
        guard let store = X509_STORE_new() else { throw Self.unavailable() }
        defer { X509_STORE_free(store) }
        for anchor in anchors {
            // Adding the same certificate twice is harmless: OpenSSL keeps one copy.
            guard X509_STORE_add_cert(store, anchor.handle.pointer) == 1 else { throw Self.unavailable() }
        }

        // The stack borrows the certificates: freed without freeing its elements.
        guard let untrusted = wallet_sk_X509_new_null() else { throw Self.unavailable() }
        defer { wallet_sk_X509_free(untrusted) }
        for certificate in intermediates {
            guard wallet_sk_X509_push(untrusted, certificate.handle.pointer) > 0 else { throw Self.unavailable() }
        }

        guard let context = X509_STORE_CTX_new() else { throw Self.unavailable() }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.handle.pointer, untrusted) == 1,
              let parameters = X509_STORE_CTX_get0_param(context) else {
            throw Self.unavailable()
        }
        var flags = UInt(0)
        if options.strict { flags |= UInt(X509_V_FLAG_X509_STRICT) }
        if options.allowPartialChain { flags |= UInt(X509_V_FLAG_PARTIAL_CHAIN) }
        if flags != 0, X509_VERIFY_PARAM_set_flags(parameters, flags) != 1 { throw Self.unavailable() }
        // Sets X509_V_FLAG_USE_CHECK_TIME: validity is checked at `time`.
        X509_VERIFY_PARAM_set_time(parameters, time_t(time.wholeSecondsSince1970))
        // Security level 2 for every certificate of the path: no RSA or DSA key under
        // 2048 bits, no EC key under 224 bits, no signature over SHA-1 or MD5 (OpenSSL
        // checks none of these by default).
        X509_VERIFY_PARAM_set_auth_level(parameters, 2)
        if let depth = options.maximumIntermediates {
            X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: max(depth, 0)))
        }

        let result = X509_verify_cert(context)
        if result != 1 {
            let code = X509_STORE_CTX_get_error(context)
            let depth = Int(X509_STORE_CTX_get_error_depth(context))
            ERR_clear_error()
            throw Self.failure(code: code, depth: depth)
        }

        guard let chain = X509_STORE_CTX_get0_chain(context) else { throw Self.unavailable() }
        let known = [leaf] + intermediates + anchors
        var path: [X509Certificate] = []
        for index in 0..<wallet_sk_X509_num(chain) {
            guard let pointer = wallet_sk_X509_value(chain, index) else { throw Self.unavailable() }
            if let match = known.first(where: { $0.handle.pointer == pointer }) {
                path.append(match)
            } else {
                path.append(try Self.copy(pointer))
            }
        }
        guard !path.isEmpty else { throw Self.unavailable() }
        return path
    }

    private static func unavailable() -> TrustFailure {
        ERR_clear_error()
        return .validatorUnavailable
    }

    /// Maps an `X509_V_ERR_*` code to the typed reason (no OpenSSL code leaves this file).
    static func failure(code: Int32, depth: Int) -> TrustFailure {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return .expired(depth: depth)
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return .notYetValid(depth: depth)
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED, X509_V_ERR_CERT_REJECTED,
             X509_V_ERR_SUBJECT_ISSUER_MISMATCH, X509_V_ERR_AKID_SKID_MISMATCH, X509_V_ERR_AKID_ISSUER_SERIAL_MISMATCH:
            return .unknownAnchor
        case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE,
             X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY, X509_V_ERR_NO_ISSUER_PUBLIC_KEY,
             X509_V_ERR_UNSUPPORTED_SIGNATURE_ALGORITHM, X509_V_ERR_SIGNATURE_ALGORITHM_MISMATCH,
             X509_V_ERR_SIGNATURE_ALGORITHM_INCONSISTENCY:
            return .badSignature(depth: depth)
        case X509_V_ERR_INVALID_CA, X509_V_ERR_INVALID_NON_CA:
            return .issuerNotCA(depth: depth)
        case X509_V_ERR_KEYUSAGE_NO_CERTSIGN:
            return .issuerCannotSignCertificates(depth: depth)
        case X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_CERT_CHAIN_TOO_LONG, X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED:
            return .pathTooLong(depth: depth)
        case X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION, X509_V_ERR_SUBTREE_MINMAX,
             X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE, X509_V_ERR_UNSUPPORTED_CONSTRAINT_SYNTAX,
             X509_V_ERR_UNSUPPORTED_NAME_SYNTAX:
            return .nameConstraintViolation(depth: depth)
        case X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION:
            return .unhandledCriticalExtension(depth: depth)
        case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD, X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD,
             X509_V_ERR_INVALID_EXTENSION, X509_V_ERR_INVALID_POLICY_EXTENSION, X509_V_ERR_UNSUPPORTED_EXTENSION_FEATURE,
             X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA, X509_V_ERR_PATHLEN_WITHOUT_KU_KEY_CERT_SIGN,
             X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA, X509_V_ERR_ISSUER_NAME_EMPTY, X509_V_ERR_SUBJECT_NAME_EMPTY,
             X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER,
             X509_V_ERR_EMPTY_SUBJECT_ALT_NAME, X509_V_ERR_EMPTY_SUBJECT_SAN_NOT_CRITICAL, X509_V_ERR_CA_BCONS_NOT_CRITICAL,
             X509_V_ERR_AUTHORITY_KEY_IDENTIFIER_CRITICAL, X509_V_ERR_SUBJECT_KEY_IDENTIFIER_CRITICAL,
             X509_V_ERR_CA_CERT_MISSING_KEY_USAGE, X509_V_ERR_EXTENSIONS_REQUIRE_VERSION_3, X509_V_ERR_EC_KEY_EXPLICIT_PARAMS:
            return .nonConformingCertificate(depth: depth)
        case X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_CA_KEY_TOO_SMALL, X509_V_ERR_CA_MD_TOO_WEAK:
            return .weakCryptography(depth: depth)
        case X509_V_ERR_OUT_OF_MEM:
            return .validatorUnavailable
        default:
            return .pathRejected(depth: depth)
        }
    }

    /// Re-parses a certificate OpenSSL put into the chain (not expected to happen:
    /// every chain element comes from the inputs).
    private static func copy(_ pointer: OpaquePointer) throws(TrustFailure) -> X509Certificate {
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &der)
        guard length > 0, let der else { throw unavailable() }
        defer { wallet_OPENSSL_free(der) }
        do {
            return try X509Certificate(derEncoded: Array(UnsafeBufferPointer(start: der, count: Int(length))))
        } catch {
            throw .validatorUnavailable
        }
    }
}
