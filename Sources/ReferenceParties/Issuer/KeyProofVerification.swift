import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// Why a key proof is refused: `invalid_proof`, or `invalid_nonce` when only the
/// `c_nonce` is wrong (OpenID4VCI 1.0 §8.3.1.2).
enum KeyProofProblem: Error, Sendable {
    case invalidProof(String)
    case invalidNonce(String)
    /// More keys than the batch size allows: the request itself is wrong.
    case tooManyKeys(Int, limit: Int)

    var refusal: EndpointRefusal {
        switch self {
        case .invalidProof(let reason): .badRequest("invalid_proof", reason)
        case .invalidNonce(let reason): .badRequest("invalid_nonce", reason)
        case .tooManyKeys(let count, let limit):
            .badRequest("invalid_credential_request", "\(count) keys, more than the batch size \(limit)")
        }
    }
}

/// The keys a request's proofs provide, each to be bound to one credential.
struct VerifiedKeyProofs: Sendable {
    var keys: [JWK] = []
    var nonces: Set<String> = []
    var records: [IssuerInspection.ProofRecord] = []
}

/// The checks of OpenID4VCI 1.0 App. F (`jwt` and `attestation` proof types, §F.4
/// "Verifying Proof") and App. D (key attestations), done here independently of the
/// SDK's client code.
struct KeyProofCheck: Sendable {
    static let proofType = "openid4vci-proof+jwt"
    static let keyAttestationType = "key-attestation+jwt"

    /// The audience proofs must name: the Credential Issuer Identifier.
    let credentialIssuer: String
    let configuration: IssuerCredentialConfiguration
    /// The client the access token was issued to; `nil` for anonymous pre-authorized access.
    let clientId: String?
    /// Whether `iss` is required when there is a client.
    let requireIssuer: Bool
    /// Whether proofs must carry a `c_nonce` (the issuer has a nonce endpoint).
    let requireNonce: Bool
    /// The `c_nonce` values currently valid.
    let validNonces: Set<String>
    let attestationAnchors: [X509Certificate]
    /// The most keys one request may bind (`batch_size`, or 1).
    let maxKeys: Int
    let now: Date
    let maxAge: TimeInterval
    let clockSkew: TimeInterval

    /// Checks the `proofs` member of a credential request.
    func verify(_ proofs: JSONValue) throws(KeyProofProblem) -> VerifiedKeyProofs {
        guard let object = proofs.objectValue else { throw .invalidProof("proofs is not an object") }
        guard object.count == 1, let type = object.keys.first, let value = object[type] else {
            throw .invalidProof("proofs must hold exactly one proof type")
        }
        guard let entries = value.arrayValue, !entries.isEmpty else { throw .invalidProof("proofs.\(type) is not a non-empty array") }
        // Every jwt proof is signed by its own key, so more proofs than keys allowed can be
        // refused before any signature is checked.
        guard entries.count <= maxKeys else { throw .tooManyKeys(entries.count, limit: maxKeys) }
        var result = VerifiedKeyProofs()
        var signingKeys: Set<String> = []
        switch type {
        case "jwt":
            for entry in entries {
                guard let compact = entry.stringValue else { throw .invalidProof("a jwt proof is not a string") }
                let proof = try verifyJWTProof(compact)
                guard signingKeys.insert(proof.signingKey.thumbprint).inserted else {
                    throw .invalidProof("two proofs are signed with the same key")
                }
                if let nonce = proof.record.nonce { result.nonces.insert(nonce) }
                result.records.append(proof.record)
                result.keys.append(contentsOf: proof.record.keys)
            }
        case "attestation" where configuration.offersAttestationProofType:
            // App. F.3: exactly one key attestation, no proof of possession.
            guard entries.count == 1, let compact = entries[0].stringValue else {
                throw .invalidProof("proofs.attestation must hold exactly one key attestation")
            }
            let attestation = try verifyAttestation(compact)
            if let nonce = attestation.nonce { result.nonces.insert(nonce) }
            result.records.append(IssuerInspection.ProofRecord(
                type: "attestation", compact: compact, keys: attestation.keys, nonce: attestation.nonce, issuer: nil,
                keyAttestation: compact))
            result.keys = attestation.keys
        default:
            throw .invalidProof("proof type \(type) is not supported for this credential")
        }
        // Each key binds at most one credential: keys attested twice count once.
        var seen: Set<String> = []
        result.keys = result.keys.filter { seen.insert($0.thumbprint).inserted }
        guard result.keys.count <= maxKeys else { throw .tooManyKeys(result.keys.count, limit: maxKeys) }
        return result
    }

    private struct JWTProof {
        let signingKey: JWK
        let record: IssuerInspection.ProofRecord
    }

    private func verifyJWTProof(_ compact: String) throws(KeyProofProblem) -> JWTProof {
        let jwt: JWT
        do { jwt = try JWT(compact: compact) } catch { throw .invalidProof("a jwt proof is not a signed JWT") }
        let header = jwt.header
        guard header.typeMatches(Self.proofType) else { throw .invalidProof("typ is not \(Self.proofType)") }
        guard let alg = header.algorithm, configuration.proofAlgorithms.contains(alg), jwt.jws.algorithm != .hs256 else {
            throw .invalidProof("alg is not one of \(configuration.proofAlgorithms.joined(separator: " "))")
        }
        // App. F.1: kid, jwk and x5c exclude each other.
        let present = ["kid", "jwk", "x5c"].filter { header[$0] != nil }
        guard present.count <= 1 else { throw .invalidProof("\(present.joined(separator: " and ")) must not appear together") }
        var attested: [JWK] = []
        var attestationCompact: String?
        if let member = header["key_attestation"] {
            guard let text = member.stringValue else { throw .invalidProof("key_attestation is not a compact JWT") }
            let attestation = try verifyAttestation(text)
            attested = attestation.keys
            attestationCompact = text
            if requireNonce, attestation.nonce != jwt.claims.nonce {
                throw .invalidNonce("the key attestation nonce is not the proof nonce")
            }
        } else if configuration.keyAttestation != nil {
            throw .invalidProof("this credential requires a key attestation in the proof")
        }
        let signingKey = try proofKey(header: header, attested: attested, jws: jwt.jws)
        let claims = jwt.claims
        guard let aud = claims["aud"] else { throw .invalidProof("no aud") }
        guard aud.stringValue == credentialIssuer else { throw .invalidProof("aud is not the credential issuer identifier") }
        guard let iat = claims["iat"]?.doubleValue else { throw .invalidProof("no iat") }
        let issued = Date(timeIntervalSince1970: iat)
        guard issued <= now.addingTimeInterval(clockSkew) else { throw .invalidProof("iat lies in the future") }
        guard issued >= now.addingTimeInterval(-maxAge) else { throw .invalidProof("the proof is too old") }
        if let exp = claims.expiration, exp <= now { throw .invalidProof("the proof expired") }
        if requireNonce {
            guard let nonce = claims.nonce else { throw .invalidProof("no nonce: get a c_nonce from the nonce endpoint") }
            guard validNonces.contains(nonce) else { throw .invalidNonce("the nonce is not a valid c_nonce") }
        }
        // App. F.1: iss is the client_id, and is omitted for anonymous pre-authorized access.
        let issuer = claims["iss"]
        if let issuer, issuer.stringValue == nil { throw .invalidProof("iss is not a string") }
        if let clientId {
            if let value = issuer?.stringValue, value != clientId { throw .invalidProof("iss is not the client_id") }
            if issuer == nil, requireIssuer { throw .invalidProof("iss (the client_id) is missing") }
        } else if issuer != nil {
            throw .invalidProof("iss must be omitted with anonymous pre-authorized access")
        }
        let keys = attested.isEmpty ? [signingKey] : attested
        return JWTProof(signingKey: signingKey, record: IssuerInspection.ProofRecord(
            type: "jwt", compact: compact, keys: keys, nonce: claims.nonce, issuer: claims.issuer,
            keyAttestation: attestationCompact))
    }

    /// The key that signed a proof: the `jwk` header, the `x5c` leaf, or with a key
    /// attestation one of its attested keys (named by `jwk`, by `kid` as an index or a
    /// key id, or found by trying each).
    private func proofKey(header: JOSEHeader, attested: [JWK], jws: JWS) throws(KeyProofProblem) -> JWK {
        var candidates: [JWK] = []
        if header["jwk"] != nil {
            let embedded: JWK?
            do { embedded = try header.jwk() } catch { throw .invalidProof("the jwk header is not a public key") }
            guard let key = embedded else { throw .invalidProof("the jwk header is not a public key") }
            if !attested.isEmpty, !attested.contains(where: { $0.thumbprint == key.thumbprint }) {
                throw .invalidProof("the proof key is not one of the attested keys")
            }
            candidates = [key]
        } else if header["x5c"] != nil {
            guard attested.isEmpty else { throw .invalidProof("x5c cannot name an attested key") }
            let chain: [X509Certificate]?
            do { chain = try header.certificateChain() } catch { throw .invalidProof("x5c does not parse") }
            guard let leaf = chain?.first, let key = try? JWK(publicKey: PublicKey(spkiDER: leaf.subjectPublicKeyInfoDER)) else {
                throw .invalidProof("the x5c leaf key is not usable")
            }
            candidates = [key]
        } else if let kid = header.keyID {
            guard !attested.isEmpty else { throw .invalidProof("kid names no key this issuer can resolve") }
            if let index = Int(kid), attested.indices.contains(index) {
                candidates = [attested[index]]
            } else {
                candidates = attested.filter { $0.keyID == kid }
            }
            guard !candidates.isEmpty else { throw .invalidProof("kid names no attested key") }
        } else if !attested.isEmpty {
            candidates = attested
        } else {
            throw .invalidProof("no jwk, kid or x5c names the proof key")
        }
        for key in candidates {
            if (try? jws.verify(with: key)) != nil { return key }
        }
        throw .invalidProof("the proof signature does not verify")
    }

    struct VerifiedAttestation {
        let keys: [JWK]
        let nonce: String?
    }

    /// App. D.1: typ, an accepted alg, an `x5c` chain to a wallet-provider root, the
    /// signature, `iat` and `exp`, public `attested_keys`, the required attack-potential
    /// levels, and the `c_nonce` when the issuer has a nonce endpoint.
    func verifyAttestation(_ compact: String) throws(KeyProofProblem) -> VerifiedAttestation {
        let jwt: JWT
        do { jwt = try JWT(compact: compact) } catch { throw .invalidProof("the key attestation is not a signed JWT") }
        guard jwt.header.typeMatches(Self.keyAttestationType) else {
            throw .invalidProof("the key attestation typ is not \(Self.keyAttestationType)")
        }
        guard let alg = jwt.header.algorithm, configuration.proofAlgorithms.contains(alg), jwt.jws.algorithm != .hs256 else {
            throw .invalidProof("the key attestation alg is not accepted")
        }
        guard jwt.header["x5c"] != nil else { throw .invalidProof("the key attestation has no x5c") }
        do {
            try jwt.jws.verifyWithCertificateChain(trustAnchors: attestationAnchors, at: now, policy: .keyAttestationSigner)
        } catch JOSEError.invalidSignature {
            throw .invalidProof("the key attestation signature does not verify")
        } catch {
            throw .invalidProof("the key attestation chain does not lead to a trusted wallet provider")
        }
        let claims = jwt.claims
        guard let iat = claims["iat"]?.doubleValue else { throw .invalidProof("the key attestation has no iat") }
        guard Date(timeIntervalSince1970: iat) <= now.addingTimeInterval(clockSkew) else {
            throw .invalidProof("the key attestation iat lies in the future")
        }
        // App. D.1: exp MUST be present when the attestation is used with jwt proofs.
        guard let exp = claims["exp"]?.doubleValue else { throw .invalidProof("the key attestation has no exp") }
        guard Date(timeIntervalSince1970: exp) > now else { throw .invalidProof("the key attestation expired") }
        guard let entries = claims["attested_keys"]?.arrayValue, !entries.isEmpty else {
            throw .invalidProof("attested_keys is not a non-empty array")
        }
        var keys: [JWK] = []
        for entry in entries {
            guard let members = entry.objectValue, let key = try? JWK(members: members), !key.isPrivate, key.keyType != .oct else {
                throw .invalidProof("an attested key is not a public asymmetric JWK")
            }
            keys.append(key)
        }
        if let requirement = configuration.keyAttestation {
            try Self.check(claims["key_storage"], accepted: requirement.keyStorage, name: "key_storage")
            try Self.check(claims["user_authentication"], accepted: requirement.userAuthentication, name: "user_authentication")
        }
        if let nonce = claims["nonce"], nonce.stringValue == nil { throw .invalidProof("the key attestation nonce is not a string") }
        if requireNonce {
            guard let nonce = claims.nonce else { throw .invalidProof("the key attestation carries no c_nonce") }
            guard validNonces.contains(nonce) else { throw .invalidNonce("the key attestation nonce is not a valid c_nonce") }
        }
        return VerifiedAttestation(keys: keys, nonce: claims.nonce)
    }

    /// The attestation must claim at least one of the accepted levels (none asked: any).
    private static func check(_ value: JSONValue?, accepted: [String], name: String) throws(KeyProofProblem) {
        guard !accepted.isEmpty else { return }
        guard let levels = value?.stringArrayValue else { throw .invalidProof("the key attestation has no \(name)") }
        guard levels.contains(where: accepted.contains) else {
            throw .invalidProof("the key attestation \(name) is none of \(accepted.joined(separator: " "))")
        }
    }
}
