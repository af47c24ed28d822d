import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// A DPoP proof that passed the checks of RFC 9449 §4.3 that need no server state.
struct VerifiedDPoPProof: Sendable {
    let key: JWK
    let keyThumbprint: String
    let jwtID: String
    let nonce: String?
    let accessTokenHash: String?
}

/// Why a DPoP proof is refused (`invalid_dpop_proof`); the text goes into `error_description`.
struct DPoPProofProblem: Error, Sendable {
    let reason: String
}

/// RFC 9449 §4.3: the stateless checks of one DPoP proof.
struct DPoPProofCheck: Sendable {
    /// The method the proof must name (`htm`).
    let method: String
    /// The URL it must name (`htu`, compared without query and fragment).
    let targetURI: String
    /// The access token it must hash into `ath`, at a protected resource.
    let accessToken: String?
    /// Accepted `alg` values.
    let algorithms: [String]
    let now: Date
    let maxAge: TimeInterval
    let clockSkew: TimeInterval

    func verify(_ compact: String) throws(DPoPProofProblem) -> VerifiedDPoPProof {
        let jwt: JWT
        do { jwt = try JWT(compact: compact) } catch { throw DPoPProofProblem(reason: "the proof is not a signed JWT") }
        let header = jwt.header
        // §4.3 items 4-7: explicitly typed, an asymmetric algorithm we accept, a public
        // key in the header that verifies the signature.
        guard header.type == "dpop+jwt" else { throw DPoPProofProblem(reason: "typ is not dpop+jwt") }
        guard let alg = header.algorithm, algorithms.contains(alg), jwt.jws.algorithm != .hs256 else {
            throw DPoPProofProblem(reason: "alg is not one of \(algorithms.joined(separator: " "))")
        }
        let embedded: JWK?
        do { embedded = try header.jwk() } catch { throw DPoPProofProblem(reason: "the jwk header is not a public key") }
        guard let key = embedded else { throw DPoPProofProblem(reason: "no jwk header") }
        do {
            try jwt.jws.verify(with: key)
        } catch {
            throw DPoPProofProblem(reason: "the signature does not verify with the jwk header")
        }
        let claims = jwt.claims
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { throw DPoPProofProblem(reason: "no jti") }
        guard let htm = claims["htm"]?.stringValue else { throw DPoPProofProblem(reason: "no htm") }
        guard htm == method else { throw DPoPProofProblem(reason: "htm \(htm) is not \(method)") }
        guard let htu = claims["htu"]?.stringValue else { throw DPoPProofProblem(reason: "no htu") }
        guard let actual = HTTPTargetURI.normalized(htu), actual == HTTPTargetURI.normalized(targetURI) else {
            throw DPoPProofProblem(reason: "htu does not name this endpoint")
        }
        // §4.3 item 11: iat within an acceptable window.
        do {
            try JWTTimeRules.proofOfPossession(maximumAge: maxAge, clockSkew: clockSkew).check(claims, at: now)
        } catch {
            throw DPoPProofProblem(reason: "the proof " + error.refusalText)
        }
        if let nonce = claims["nonce"], nonce.stringValue == nil { throw DPoPProofProblem(reason: "nonce is not a string") }
        let ath = claims["ath"]
        if let ath, ath.stringValue == nil { throw DPoPProofProblem(reason: "ath is not a string") }
        if let accessToken {
            // §4.3 item 12 / §7.1: ath = base64url(SHA-256(ASCII(access token))).
            guard let hash = ath?.stringValue else { throw DPoPProofProblem(reason: "no ath for the access token") }
            guard hash == Self.accessTokenHash(accessToken) else {
                throw DPoPProofProblem(reason: "ath does not match the access token")
            }
        }
        return VerifiedDPoPProof(key: key, keyThumbprint: key.thumbprint, jwtID: jti, nonce: claims.nonce,
                                 accessTokenHash: ath?.stringValue)
    }

    static func accessTokenHash(_ token: String) -> String {
        Base64URL.encode(SHA256.digest(Array(token.utf8)))
    }
}

/// Where a DPoP proof is checked: the token endpoint answers 400 JSON errors, a
/// protected resource 401 with a `WWW-Authenticate: DPoP` challenge (RFC 9449 §7.1, §8, §9).
enum DPoPSite: Sendable {
    case authorizationServer
    case resource
}

extension ReferenceIssuer {
    /// Checks the `DPoP` header of `request`, if any: the proof itself, replay of its
    /// `jti`, and the server nonce when nonces are required. Returns `nil` when there is
    /// no proof or DPoP is disabled; the caller decides whether a proof was required.
    func checkDPoP(_ request: HTTPRequest, site: DPoPSite, path: String, accessToken: String?)
        throws(EndpointRefusal) -> VerifiedDPoPProof? {
        let policy = configuration.dpop
        guard policy.mode != .disabled else { return nil }
        let values = request.headers.values(for: "DPoP")
        guard !values.isEmpty else { return nil }
        guard values.count == 1 else { throw dpopRefusal(site, "invalid_dpop_proof", "more than one DPoP header") }
        let lifetimes = configuration.lifetimes
        let check = DPoPProofCheck(method: request.method.rawValue, targetURI: endpoints.url(path), accessToken: accessToken,
                                   algorithms: policy.algorithms, now: clock.now, maxAge: lifetimes.proofMaxAge,
                                   clockSkew: lifetimes.clockSkew)
        let proof: VerifiedDPoPProof
        do {
            proof = try check.verify(values[0])
        } catch {
            throw dpopRefusal(site, "invalid_dpop_proof", error.reason)
        }
        record.dpopProofs.append(IssuerInspection.DPoPProofRecord(
            path: path, keyThumbprint: proof.keyThumbprint, nonce: proof.nonce, accessTokenHash: proof.accessTokenHash,
            jwtID: proof.jwtID))
        // Forced challenges first: they ignore whatever nonce the proof carries.
        switch site {
        case .authorizationServer where configuration.behaviour.forcedTokenNonceChallenges > 0:
            configuration.behaviour.forcedTokenNonceChallenges -= 1
            throw try nonceChallenge(site)
        case .resource where configuration.behaviour.forcedCredentialNonceChallenges > 0 && path == endpoints.credentialPath:
            configuration.behaviour.forcedCredentialNonceChallenges -= 1
            throw try nonceChallenge(site)
        default:
            break
        }
        if policy.requireNonce {
            guard let nonce = proof.nonce, let expiry = dpopNonces[nonce], expiry > clock.now else {
                throw try nonceChallenge(site)
            }
        }
        // §11.1: a proof is used once. Remembered until it is too old to be accepted anyway.
        let replayKey = proof.keyThumbprint + " " + proof.jwtID
        if let until = seenDPoPProofs[replayKey], until > clock.now {
            throw dpopRefusal(site, "invalid_dpop_proof", "jti was used before")
        }
        purge(&seenDPoPProofs)
        seenDPoPProofs[replayKey] = clock.now.addingTimeInterval(lifetimes.proofMaxAge + lifetimes.clockSkew)
        return proof
    }

    /// A fresh server nonce, remembered until it expires.
    func freshDPoPNonce() throws(EndpointRefusal) -> String {
        let nonce = try randomValue(24)
        purge(&dpopNonces)
        dpopNonces[nonce] = clock.now.addingTimeInterval(configuration.lifetimes.dpopNonce)
        return nonce
    }

    /// The `DPoP-Nonce` header successful answers carry when nonces are in use.
    func dpopNonceHeaders() throws(EndpointRefusal) -> HTTPHeaders {
        guard configuration.dpop.mode != .disabled, configuration.dpop.requireNonce else { return HTTPHeaders() }
        return ["DPoP-Nonce": try freshDPoPNonce()]
    }

    /// `use_dpop_nonce` with a fresh nonce (RFC 9449 §8: 400 at the AS; §9: 401 at a resource).
    func nonceChallenge(_ site: DPoPSite) throws(EndpointRefusal) -> EndpointRefusal {
        var refusal = dpopRefusal(site, "use_dpop_nonce", "a fresh server nonce is needed in the DPoP proof")
        refusal.headers["DPoP-Nonce"] = try freshDPoPNonce()
        return refusal
    }

    func dpopRefusal(_ site: DPoPSite, _ error: String, _ description: String) -> EndpointRefusal {
        switch site {
        case .authorizationServer:
            return .badRequest(error, description)
        case .resource:
            return EndpointRefusal(status: 401, error: error, description: description,
                                   form: .challenge(scheme: "DPoP", algs: configuration.dpop.algorithms))
        }
    }
}
