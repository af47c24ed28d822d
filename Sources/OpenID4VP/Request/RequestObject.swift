import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// A request object (JAR, RFC 9101) checked as OpenID4VP 1.0 §5 requires, with what its
/// signature establishes about the verifier.
struct RequestObject: Sendable {
    /// The JOSE `typ` every request object must carry (§5).
    static let type = "oauth-authz-req+jwt"
    /// The `aud` of a request object under static discovery (§5.8).
    static let selfIssuedAudience = "https://self-issued.me/v2"

    /// The payload: the Authorization Request parameters.
    let parameters: JSONObject
    /// The verifier's client identifier.
    let clientId: ClientIdentifier
    /// Who the verifier is, as established.
    let verifier: VerifierIdentity
    /// Whether it came as a JWS (false for `alg` `none`, which only `redirect_uri` may use).
    let isSigned: Bool

    /// What the caller expects of a request object.
    struct Expectations: Sendable {
        /// The `client_id` of the authorization request that referred to it (nil when the
        /// request object came alone, as over the DC API or from a bare request URI).
        var clientId: String?
        /// The `wallet_nonce` the wallet POSTed for it, which must come back (§5.10.1).
        var walletNonce: String?
        /// Reader trust anchors; none means signed requests resolve untrusted.
        var readerAnchors: [X509Certificate]
        /// Whether the app configured reader anchors, though none of them parsed: signed
        /// requests must then be trusted, and with no usable anchor none is.
        var anchorsConfigured = false
        /// `aud` values besides `https://self-issued.me/v2` that name this wallet.
        var audiences: [String]
        /// When the checks are made.
        var now: Date
        /// The tolerance on `exp`, `nbf` and `iat`.
        var clockSkew: TimeInterval
    }

    /// Checks a compact request object in the order the spec implies: form and `typ`,
    /// then the client identifier and reader trust, then the claims that bind it to this
    /// exchange (`wallet_nonce`, `aud`, time).
    init(compact: String, expecting expectations: Expectations) throws(PresentationError) {
        let parts = compact.compactParts(separatedBy: UInt8(ascii: "."))
        if parts.count == 5 { throw .invalidRequest(.encryptedRequestObject) }
        guard parts.count == 3 else {
            throw .invalidRequest(.malformedRequestObject(.malformed(.partCount(expected: 3, actual: parts.count))))
        }
        let header: JOSEHeader
        do { header = try JOSEHeader(encoded: parts[0]) } catch { throw .invalidRequest(.malformedRequestObject(error)) }
        // §5: a request object without this typ is not processed at all.
        guard header.typeMatches(Self.type) else { throw .invalidRequest(.requestObjectType(header.type)) }

        let isUnsigned = header.algorithm == "none"
        let jws: JWS?
        let payload: [UInt8]
        if isUnsigned {
            // RFC 9101 §6.1: an unsigned request object has alg none and an empty signature.
            guard parts[2].isEmpty else { throw .invalidRequest(.malformedRequestObject(.malformed(.partNotEmpty(.signature)))) }
            guard let bytes = Base64URL.decodeStrict(parts[1]) else {
                throw .invalidRequest(.malformedRequestObject(.malformed(.notBase64URL(.payload))))
            }
            jws = nil
            payload = bytes
        } else {
            do {
                let signed = try JWS(compact: compact)
                jws = signed
                payload = signed.payload
            } catch {
                if case .unsupportedAlgorithm(_, let name) = error { throw .invalidRequest(.unsupportedSignatureAlgorithm(name)) }
                throw .invalidRequest(.malformedRequestObject(error))
            }
        }
        let parameters: JSONObject
        do { parameters = try JSONValue.parseObject(payload) } catch {
            throw .invalidRequest(.malformedRequestObject(.invalidJSON(part: .payload, error)))
        }

        // §5.10.1: the client_id of the request object and of the request are identical.
        let claimedClientId = parameters["client_id"]?.stringValue
        if let expected = expectations.clientId, claimedClientId != expected {
            throw .invalidRequest(.clientIdMismatch(expected: expected, actual: claimedClientId))
        }
        guard let claimedClientId else { throw .invalidRequest(.missingClientId) }
        let clientId: ClientIdentifier
        do { clientId = try ClientIdentifier(claimedClientId) } catch { throw .invalidRequest(error) }

        let verifier: VerifierIdentity
        switch clientId.scheme {
        case .redirectUri:
            // §5.9.3: no key can authenticate a redirect_uri client, so it cannot sign.
            guard isUnsigned else { throw .invalidRequest(.signedRequestNotAllowed) }
            verifier = VerifierIdentity(clientId: clientId.full, clientIdScheme: .redirectUri)
        case .x509SanDns, .x509Hash:
            guard let jws else { throw .invalidRequest(.unsignedRequestNotAllowed) }
            verifier = try Self.authenticate(jws, header: header, clientId: clientId, expectations: expectations)
        case .origin:
            throw .invalidRequest(.unsupportedClientIdPrefix(ClientIdScheme.origin.rawValue))
        }

        if let expected = expectations.walletNonce {
            let actual = parameters["wallet_nonce"]?.stringValue
            guard actual == expected else { throw .invalidRequest(.walletNonceMismatch(expected: expected, actual: actual)) }
        }
        try Self.checkAudience(parameters, expectations: expectations)
        try Self.checkTime(parameters, expectations: expectations)
        self.parameters = parameters
        self.clientId = clientId
        self.verifier = verifier
        self.isSigned = jws != nil
    }

    /// Reader trust (§5.9.3 for `x509_san_dns` and `x509_hash`): with anchors, the chain
    /// must validate to one under the prefix's policy and the signature must verify with
    /// the leaf, or the verifier is not trusted; without anchors, the signature and the
    /// binding of the client identifier to the leaf are still checked, and the verifier
    /// resolves untrusted.
    private static func authenticate(_ jws: JWS, header: JOSEHeader, clientId: ClientIdentifier,
                                     expectations: Expectations) throws(PresentationError) -> VerifierIdentity {
        let anchored = !expectations.readerAnchors.isEmpty || expectations.anchorsConfigured
        let chain: [X509Certificate]
        do {
            chain = try header.certificateChain() ?? []
        } catch {
            if case .untrusted(let failure) = error, anchored { throw .verifierNotTrusted(failure) }
            throw .invalidRequest(.malformedRequestObject(error))
        }
        guard let leaf = chain.first else {
            throw anchored ? .verifierNotTrusted(.missingCertificate) : .invalidRequest(.missingCertificateChain)
        }
        let policy: X509TrustPolicy
        if let hash = clientId.certificateHash {
            policy = .openID4VPClient(certificateSHA256: hash)
        } else {
            policy = .openID4VPClient(sanDNS: clientId.value)
        }
        if anchored {
            let validated: ValidatedChain
            let key: PublicKey
            do {
                validated = try X509ChainValidator(anchors: expectations.readerAnchors)
                    .validate(chain: chain, at: expectations.now, policy: policy)
                key = try validated.leafPublicKey()
            } catch {
                throw .verifierNotTrusted(error)
            }
            do { try jws.verify(with: key) } catch { throw .verifierNotTrusted(.signatureInvalid) }
            return VerifierIdentity(clientId: clientId.full, clientIdScheme: clientId.scheme,
                                    commonName: validated.leaf.subject.commonName, trusted: true)
        }
        let key: PublicKey
        do { key = try leaf.publicKey } catch {
            throw .invalidRequest(.invalidSignature(.untrusted(.unsupportedLeafKey)))
        }
        do { try jws.verify(with: key) } catch { throw .invalidRequest(.invalidSignature(error)) }
        let bound: Bool
        if let hash = clientId.certificateHash {
            bound = leaf.sha256Fingerprint == hash
        } else {
            bound = leaf.subjectAlternativeDNSNames.contains { $0.lowercased() == clientId.value.lowercased() }
        }
        guard bound else { throw .invalidRequest(.clientIdNotBoundToCertificate) }
        return VerifierIdentity(clientId: clientId.full, clientIdScheme: clientId.scheme,
                                commonName: leaf.subject.commonName, trusted: false)
    }

    /// §5.8: `aud` is the wallet's issuer (dynamic discovery) or `https://self-issued.me/v2`
    /// (static). A request object without `aud` is accepted.
    private static func checkAudience(_ parameters: JSONObject, expectations: Expectations) throws(PresentationError) {
        guard let value = parameters["aud"], !value.isNull else { return }
        let audiences: [String]
        if let single = value.stringValue {
            audiences = [single]
        } else if let list = value.stringArrayValue {
            audiences = list
        } else {
            throw .invalidRequest(.invalidParameter("aud"))
        }
        let accepted = [selfIssuedAudience] + expectations.audiences
        guard audiences.contains(where: accepted.contains) else { throw .invalidRequest(.audienceMismatch(audiences)) }
    }

    /// RFC 9101 §10.2 / RFC 7519: `exp` in the past, or `nbf`/`iat` in the future, refuse
    /// the request object (with the configured skew). A time claim set to null counts as
    /// absent, as `aud` does.
    private static func checkTime(_ parameters: JSONObject, expectations: Expectations) throws(PresentationError) {
        var claims = parameters
        for claim in JWTTimeClaim.allCases where claims[claim.rawValue]?.isNull == true { claims[claim.rawValue] = nil }
        do {
            try JWTTimeRules(clockSkew: expectations.clockSkew).check(claims, at: expectations.now)
        } catch {
            switch error {
            case .missing(let claim), .notANumber(let claim): throw .invalidRequest(.invalidParameter(claim.rawValue))
            // These rules set no maximum age, so `issuedTooLongAgo` does not occur.
            case .expired(let time, let now), .issuedTooLongAgo(let time, let now, _):
                throw .invalidRequest(.requestExpired(exp: time, now: now))
            case .notYetValid(let time, let now), .issuedInFuture(let time, let now):
                throw .invalidRequest(.requestNotYetValid(time, now: now))
            }
        }
    }
}
