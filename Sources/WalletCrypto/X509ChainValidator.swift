import COpenSSL
import Foundation

/// Validates X.509 certificate paths with OpenSSL's `X509_verify_cert` against a
/// fixed set of trust anchors, at a caller-given time (never the system clock).
///
/// No TLS purpose is checked: ISO 18013-5 document-signer and reader certificates
/// carry their own extended key usages, which callers check on the returned leaf.
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
    /// (untrusted, in any order) to one of the anchors.
    ///
    /// - Returns: the validated path, leaf first and the anchor last.
    /// - Throws: `CryptoError.chainValidationFailed` with the typed reason, or
    ///   `CryptoError.openSSL` when OpenSSL itself fails.
    public func validate(leaf: X509Certificate, intermediates: [X509Certificate] = [],
                         at time: Date) throws(CryptoError) -> [X509Certificate] {
        guard !anchors.isEmpty else { throw .chainValidationFailed(.unknownAnchor) }
        guard let store = X509_STORE_new() else { throw openSSLError("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for anchor in anchors {
            // Adding the same certificate twice is harmless: OpenSSL keeps one copy.
            guard X509_STORE_add_cert(store, anchor.handle.pointer) == 1 else {
                throw openSSLError("X509_STORE_add_cert")
            }
        }

        // The stack borrows the certificates: freed without freeing its elements.
        guard let untrusted = wallet_sk_X509_new_null() else { throw openSSLError("sk_X509_new_null") }
        defer { wallet_sk_X509_free(untrusted) }
        for certificate in intermediates {
            guard wallet_sk_X509_push(untrusted, certificate.handle.pointer) > 0 else {
                throw openSSLError("sk_X509_push")
            }
        }

        guard let context = X509_STORE_CTX_new() else { throw openSSLError("X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.handle.pointer, untrusted) == 1 else {
            throw openSSLError("X509_STORE_CTX_init")
        }

        guard let parameters = X509_STORE_CTX_get0_param(context) else {
            throw openSSLError("X509_STORE_CTX_get0_param")
        }
        var flags = UInt(0)
        if options.strict { flags |= UInt(X509_V_FLAG_X509_STRICT) }
        if options.allowPartialChain { flags |= UInt(X509_V_FLAG_PARTIAL_CHAIN) }
        if flags != 0, X509_VERIFY_PARAM_set_flags(parameters, flags) != 1 {
            throw openSSLError("X509_VERIFY_PARAM_set_flags")
        }
        // Sets X509_V_FLAG_USE_CHECK_TIME: validity is checked at `time`.
        X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970.rounded(.down)))
        if let depth = options.maximumIntermediates {
            X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: max(depth, 0)))
        }

        let result = X509_verify_cert(context)
        if result != 1 {
            let code = X509_STORE_CTX_get_error(context)
            let depth = Int(X509_STORE_CTX_get_error_depth(context))
            if code == X509_V_OK {
                throw openSSLError("X509_verify_cert")
            }
            ERR_clear_error()
            throw .chainValidationFailed(Self.failure(code: code, depth: depth))
        }

        guard let chain = X509_STORE_CTX_get0_chain(context) else { throw openSSLError("X509_STORE_CTX_get0_chain") }
        let known = [leaf] + intermediates + anchors
        var path: [X509Certificate] = []
        for index in 0..<wallet_sk_X509_num(chain) {
            guard let pointer = wallet_sk_X509_value(chain, index) else { throw openSSLError("sk_X509_value") }
            if let match = known.first(where: { $0.handle.pointer == pointer }) {
                path.append(match)
            } else {
                path.append(try Self.copy(pointer))
            }
        }
        return path
    }

    /// Validates an x5c-style chain: `chain[0]` is the leaf, the rest are untrusted
    /// intermediates. Throws `.emptyChain` for an empty array.
    public func validate(chain: [X509Certificate], at time: Date) throws(CryptoError) -> [X509Certificate] {
        guard let leaf = chain.first else { throw .chainValidationFailed(.emptyChain) }
        return try validate(leaf: leaf, intermediates: Array(chain.dropFirst()), at: time)
    }

    /// Maps an `X509_V_ERR_*` code to the typed reason.
    static func failure(code: Int32, depth: Int) -> ChainValidationFailure {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return .expired(depth: depth)
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return .notYetValid(depth: depth)
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED:
            return .unknownAnchor
        case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE,
             X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY:
            return .badSignature(depth: depth)
        case X509_V_ERR_INVALID_CA:
            return .notCA(depth: depth)
        case X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_CERT_CHAIN_TOO_LONG:
            return .pathTooLong(depth: depth)
        default:
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown"
            return .other(code: Int(code), reason: reason, depth: depth)
        }
    }

    /// Re-parses a certificate OpenSSL put into the chain (not expected to happen:
    /// every chain element comes from the inputs).
    private static func copy(_ pointer: OpaquePointer) throws(CryptoError) -> X509Certificate {
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &der)
        guard length > 0, let der else { throw openSSLError("i2d_X509") }
        defer { wallet_OPENSSL_free(der) }
        return try X509Certificate(derEncoded: Array(UnsafeBufferPointer(start: der, count: Int(length))))
    }
}

extension X509Certificate {
    /// Validates `leaf` through `intermediates` to one of `anchors` at `time`;
    /// see `X509ChainValidator.validate(leaf:intermediates:at:)`.
    ///
    /// - Returns: the validated path, leaf first and the anchor last.
    public static func validateChain(leaf: X509Certificate, intermediates: [X509Certificate] = [],
                                     anchors: [X509Certificate], at time: Date,
                                     options: X509ChainValidator.Options = .init()) throws(CryptoError) -> [X509Certificate] {
        try X509ChainValidator(anchors: anchors, options: options)
            .validate(leaf: leaf, intermediates: intermediates, at: time)
    }
}
