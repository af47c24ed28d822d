import Foundation

/// What a validated certificate path must satisfy for one use, beyond RFC 5280 path
/// validation: extended key usage, key usage, the CA profile of the certificates above
/// the leaf, validity at a second time, and the binding of the leaf to an identifier.
///
/// A policy is a list of rules and composes with `+`; the presets name the uses the SDK
/// knows. Rules about issuing certificates apply to the certificates above the leaf: when
/// the caller trusts a leaf directly (it is its own anchor), they hold vacuously.
///
/// ```swift
/// let policy = X509TrustPolicy.mdocDocumentSigner + .init([.leafValid(at: mso.validityInfo.signed)])
/// let chain = try validator.validate(chain: x5chain, at: now, policy: policy)
/// ```
public struct X509TrustPolicy: Sendable, Hashable {
    /// One requirement on a validated path.
    public enum Rule: Sendable, Hashable {
        /// The leaf's extendedKeyUsage lists this purpose (dotted OID).
        case leafExtendedKeyUsage(String)
        /// The leaf's keyUsage extension is present and has all these bits (profiles that
        /// mandate the extension, such as ISO 18013-5 Annex B).
        case leafKeyUsage(KeyUsage)
        /// The leaf's key may be used for all these bits: its keyUsage extension has them,
        /// or it has none (RFC 5280 §4.2.1.3: no extension, no restriction).
        case leafKeyUsagePermits(KeyUsage)
        /// The leaf is an end-entity certificate: basicConstraints absent or cA false.
        case leafNotCA
        /// Every certificate above the leaf is a CA with the keyCertSign key usage.
        case issuersAreCertificateAuthorities
        /// The anchor (when it is not the leaf) carries a pathLenConstraint of at most this value.
        case anchorPathLength(maximum: Int)
        /// The leaf was valid at this time too (e.g. when the data says it was signed).
        case leafValid(at: Date)
        /// A subjectAltName of the leaf names this credential issuer identifier
        /// (SD-JWT VC: a uniformResourceIdentifier equal to it, or, for an `https` URL
        /// or a `dns:` URI, a dNSName equal to its host).
        case leafNamesIssuer(String)
        /// A dNSName subjectAltName of the leaf equals this host (OpenID4VP `x509_san_dns`).
        case leafDNSName(String)
        /// The SHA-256 of the leaf's DER encoding is these bytes (OpenID4VP `x509_hash`).
        case leafSHA256([UInt8])
    }

    /// The rules, checked in order; the first one broken decides the failure.
    public let rules: [Rule]

    /// A policy of `rules`.
    public init(_ rules: [Rule] = []) {
        self.rules = rules
    }

    /// Path validation alone: any certificate that chains to an anchor, for any use.
    /// Say so explicitly where no use-specific policy exists.
    public static let pathValidationOnly = X509TrustPolicy()

    /// Both policies: the rules of `lhs`, then those of `rhs`.
    public static func + (lhs: X509TrustPolicy, rhs: X509TrustPolicy) -> X509TrustPolicy {
        X509TrustPolicy(lhs.rules + rhs.rules)
    }

    // MARK: Presets

    /// The basics of an ISO/IEC 18013-5 Annex B IACA certificate that a reader checks on
    /// the anchor: a CA with keyCertSign whose pathLenConstraint is 0 (a document signer
    /// or reader certificate sits directly under it).
    public static let iaca = X509TrustPolicy([.issuersAreCertificateAuthorities, .anchorPathLength(maximum: 0)])

    /// An ISO/IEC 18013-5 document signer (Annex B.1.4) under an IACA: an end-entity
    /// certificate with digitalSignature and the mdoc DS extended key usage 1.0.18013.5.1.2.
    public static let mdocDocumentSigner = X509TrustPolicy([
        .leafNotCA, .leafKeyUsage(.digitalSignature), .leafExtendedKeyUsage(ExtendedKeyUsageOID.mdocDocumentSigner),
    ]) + iaca

    /// An ISO/IEC 18013-5 mdoc reader authentication certificate (Annex B.1.7): an
    /// end-entity certificate with digitalSignature and the reader EKU 1.0.18013.5.1.6,
    /// issued by CAs.
    public static let mdocReaderAuthentication = X509TrustPolicy([
        .leafNotCA, .leafKeyUsage(.digitalSignature), .leafExtendedKeyUsage(ExtendedKeyUsageOID.mdocReaderAuthentication),
        .issuersAreCertificateAuthorities,
    ])

    /// A certificate that signs data for its subject: an end-entity certificate whose key
    /// usage permits digitalSignature, issued by CAs. The base of the JWT signer presets.
    public static let signingCertificate = X509TrustPolicy([
        .leafNotCA, .leafKeyUsagePermits(.digitalSignature), .issuersAreCertificateAuthorities,
    ])

    /// The issuer of an SD-JWT VC whose key comes from `x5c` (SD-JWT VC §3.5): a signing
    /// certificate whose subjectAltName names `issuer`, the credential's `iss`.
    public static func sdJWTVCIssuer(_ issuer: String) -> X509TrustPolicy {
        signingCertificate + X509TrustPolicy([.leafNamesIssuer(issuer)])
    }

    /// An OpenID4VP verifier identified by `x509_san_dns:<host>` (OpenID4VP 1.0 §5.9.3):
    /// a signing certificate with a dNSName subjectAltName equal to `host`.
    public static func openID4VPClient(sanDNS host: String) -> X509TrustPolicy {
        signingCertificate + X509TrustPolicy([.leafDNSName(host)])
    }

    /// An OpenID4VP verifier identified by `x509_hash:<hash>` (OpenID4VP 1.0 §5.9.3): a
    /// signing certificate whose DER encoding hashes (SHA-256) to `sha256`, the base64url-
    /// decoded value after the prefix.
    public static func openID4VPClient(certificateSHA256 sha256: [UInt8]) -> X509TrustPolicy {
        signingCertificate + X509TrustPolicy([.leafSHA256(sha256)])
    }

    /// The wallet provider's key that signs an OpenID4VCI key attestation (Appendix D.1):
    /// a signing certificate.
    public static let keyAttestationSigner = signingCertificate

    // MARK: Checking

    /// Checks every rule against a validated path.
    /// - Throws: the `TrustFailure` of the first rule broken.
    public func check(_ chain: ValidatedChain) throws(TrustFailure) {
        for rule in rules { try Self.check(rule, chain) }
    }

    private static func check(_ rule: Rule, _ chain: ValidatedChain) throws(TrustFailure) {
        let leaf = chain.leaf
        switch rule {
        case .leafExtendedKeyUsage(let purpose):
            guard leaf.extendedKeyUsage.contains(purpose) else {
                throw .missingExtendedKeyUsage(required: purpose, depth: 0)
            }
        case .leafKeyUsage(let bits):
            guard let usage = leaf.keyUsage, usage.isSuperset(of: bits) else {
                throw .missingKeyUsage(required: bits, depth: 0)
            }
        case .leafKeyUsagePermits(let bits):
            if let usage = leaf.keyUsage, !usage.isSuperset(of: bits) {
                throw .missingKeyUsage(required: bits, depth: 0)
            }
        case .leafNotCA:
            guard leaf.basicConstraints?.isCA != true else { throw .leafIsCA }
        case .issuersAreCertificateAuthorities:
            for (depth, certificate) in chain.path.enumerated().dropFirst() {
                guard certificate.basicConstraints?.isCA == true else { throw .issuerNotCA(depth: depth) }
                guard certificate.keyUsage?.contains(.keyCertSign) == true else {
                    throw .issuerCannotSignCertificates(depth: depth)
                }
            }
        case .anchorPathLength(let maximum):
            guard chain.path.count > 1 else { return }
            let depth = chain.path.count - 1
            guard let length = chain.anchor.basicConstraints?.pathLength, length <= maximum else {
                throw .pathLengthNotConstrained(depth: depth, maximum: maximum)
            }
        case .leafValid(let time):
            guard leaf.isValid(at: time) else { throw .notValidAt(time: time, depth: 0) }
        case .leafNamesIssuer(let issuer):
            guard Self.names(leaf, issuer: issuer) else { throw .subjectAlternativeNameMismatch(expected: issuer) }
        case .leafDNSName(let host):
            guard leaf.subjectAlternativeDNSNames.contains(where: { Self.sameHost($0, host) }) else {
                throw .subjectAlternativeNameMismatch(expected: host)
            }
        case .leafSHA256(let expected):
            guard leaf.sha256Fingerprint == expected else { throw .certificateHashMismatch }
        }
    }

    /// SD-JWT VC §3.5: the `iss` matches a uniformResourceIdentifier SAN; a DNS name
    /// (a `dns:` URI, RFC 4501, or the host of an `https` URL as HAIP profiles it)
    /// matches a dNSName SAN.
    static func names(_ leaf: X509Certificate, issuer: String) -> Bool {
        if leaf.subjectAlternativeURIs.contains(issuer) { return true }
        guard let host = dnsName(inIssuer: issuer) else { return false }
        return leaf.subjectAlternativeDNSNames.contains { sameHost($0, host) }
    }

    /// The DNS name an issuer identifier carries: the host of `https://host[:port][/path]`
    /// (no user info) or of `dns:host` / `dns://authority/host`; nil otherwise.
    static func dnsName(inIssuer issuer: String) -> String? {
        let lowered = issuer.lowercased()
        if lowered.hasPrefix("https://") {
            let rest = issuer.dropFirst("https://".count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard !authority.contains("@") else { return nil }
            let host = authority.prefix { $0 != ":" }
            return host.isEmpty ? nil : String(host)
        }
        if lowered.hasPrefix("dns:") {
            var rest = issuer.dropFirst("dns:".count)
            if rest.hasPrefix("//") {
                // dns://authority/host: the DNS server, then the name.
                rest = rest.dropFirst(2)
                guard let slash = rest.firstIndex(of: "/") else { return nil }
                rest = rest[rest.index(after: slash)...]
            }
            let host = rest.prefix { $0 != "?" }
            return host.isEmpty ? nil : String(host)
        }
        return nil
    }

    /// DNS names compare case-insensitively in ASCII (RFC 4343); no wildcards.
    static func sameHost(_ name: String, _ host: String) -> Bool {
        name.utf8.count == host.utf8.count && name.lowercased() == host.lowercased()
    }
}

/// A certificate path that validated to a trust anchor at `validationTime` and met the
/// policy it was validated under. Only `X509ChainValidator` makes one.
public struct ValidatedChain: Sendable, Hashable {
    /// The path: the leaf first, then the issuers, the anchor last (never empty).
    public let path: [X509Certificate]
    /// The time the path was validated at.
    public let validationTime: Date

    init(path: [X509Certificate], validationTime: Date) {
        self.path = path
        self.validationTime = validationTime
    }

    /// The end-entity certificate whose key signed the data.
    public var leaf: X509Certificate { path[0] }

    /// The trusted certificate the path ends at (the leaf itself when it is an anchor).
    public var anchor: X509Certificate { path[path.count - 1] }

    /// The certificates between the leaf and the anchor.
    public var intermediates: ArraySlice<X509Certificate> { path.count > 2 ? path[1..<(path.count - 1)] : [] }

    /// The leaf's public key.
    /// - Throws: `unsupportedLeafKey` when it is neither EC on a supported curve nor Ed25519.
    public func leafPublicKey() throws(TrustFailure) -> PublicKey {
        do { return try leaf.publicKey } catch { throw .unsupportedLeafKey }
    }
}
