import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// Why a key proof is refused: `invalid_proof`, or `invalid_nonce` when only the
/// `c_nonce` is wrong (OpenID4VCI 1.0 §8.3.1.2).
enum KeyProofProblem: Error, Equatable, Sendable {
    case invalidProof(InvalidProofReason)
    case invalidNonce(InvalidNonceReason)
    /// More keys than the batch size allows: the request itself is wrong.
    case tooManyKeys(Int, limit: Int)

    var refusal: EndpointRefusal {
        switch self {
        case .invalidProof(let reason): .badRequest("invalid_proof", reason.description)
        case .invalidNonce(let reason): .badRequest("invalid_nonce", reason.description)
        case .tooManyKeys(let count, let limit):
            .badRequest("invalid_credential_request", "\(count) keys, more than the batch size \(limit)")
        }
    }
}

/// What is wrong with the `proofs` of a credential request (`invalid_proof`); the
/// description is the `error_description` the issuer answers with.
enum InvalidProofReason: Equatable, Sendable, CustomStringConvertible {
    // The `proofs` member (§8.2).
    case proofsMissing
    case proofsNotAnObject
    case notExactlyOneProofType
    case emptyProofList(type: String)
    case unsupportedProofType(String)
    case attestationProofCount
    // A `jwt` proof (App. F.1, F.4).
    case proofNotAString
    case notASignedJWT
    case wrongType
    case algorithmNotAccepted(accepted: [String])
    case conflictingKeyHeaders([String])
    case keyAttestationNotAString
    case keyAttestationRequired
    case missingAudience
    case audienceMismatch
    case time(JWTTimeFailure)
    case missingNonce
    case issuerNotAString
    case issuerMismatch
    case issuerMissing
    case issuerNotAllowed
    case duplicateSigningKey
    // The key that signed it.
    case jwkHeaderNotAPublicKey
    case keyNotAttested
    case certificateChainWithAttestation
    case certificateChainUnparsable
    case certificateKeyUnusable
    case keyIDWithoutAttestation
    case keyIDNamesNoAttestedKey
    case noKeyNamed
    case signatureInvalid
    // A key attestation (App. D.1), in a `jwt` proof's header or as an `attestation` proof.
    case keyAttestation(KeyAttestationDefect)

    var description: String {
        switch self {
        case .proofsMissing: "proofs is missing"
        case .proofsNotAnObject: "proofs is not an object"
        case .notExactlyOneProofType: "proofs must hold exactly one proof type"
        case .emptyProofList(let type): "proofs.\(type) is not a non-empty array"
        case .unsupportedProofType(let type): "proof type \(type) is not supported for this credential"
        case .attestationProofCount: "proofs.attestation must hold exactly one key attestation"
        case .proofNotAString: "a jwt proof is not a string"
        case .notASignedJWT: "a jwt proof is not a signed JWT"
        case .wrongType: "typ is not \(KeyProofCheck.proofType)"
        case .algorithmNotAccepted(let accepted): "alg is not one of \(accepted.joined(separator: " "))"
        case .conflictingKeyHeaders(let names): "\(names.joined(separator: " and ")) must not appear together"
        case .keyAttestationNotAString: "key_attestation is not a compact JWT"
        case .keyAttestationRequired: "this credential requires a key attestation in the proof"
        case .missingAudience: "no aud"
        case .audienceMismatch: "aud is not the credential issuer identifier"
        case .time(let failure): "the proof " + failure.refusalText
        case .missingNonce: "no nonce: get a c_nonce from the nonce endpoint"
        case .issuerNotAString: "iss is not a string"
        case .issuerMismatch: "iss is not the client_id"
        case .issuerMissing: "iss (the client_id) is missing"
        case .issuerNotAllowed: "iss must be omitted with anonymous pre-authorized access"
        case .duplicateSigningKey: "two proofs are signed with the same key"
        case .jwkHeaderNotAPublicKey: "the jwk header is not a public key"
        case .keyNotAttested: "the proof key is not one of the attested keys"
        case .certificateChainWithAttestation: "x5c cannot name an attested key"
        case .certificateChainUnparsable: "x5c does not parse"
        case .certificateKeyUnusable: "the x5c leaf key is not usable"
        case .keyIDWithoutAttestation: "kid names no key this issuer can resolve"
        case .keyIDNamesNoAttestedKey: "kid names no attested key"
        case .noKeyNamed: "no jwk, kid or x5c names the proof key"
        case .signatureInvalid: "the proof signature does not verify"
        case .keyAttestation(let defect): defect.description
        }
    }
}

/// What is wrong with a key attestation (OpenID4VCI 1.0 App. D.1).
enum KeyAttestationDefect: Equatable, Sendable, CustomStringConvertible {
    case notASignedJWT
    case wrongType
    case algorithmNotAccepted
    case missingCertificateChain
    case signatureInvalid
    case untrustedChain
    case time(JWTTimeFailure)
    case attestedKeysMissing
    case attestedKeyNotPublic
    case missingLevel(claim: String)
    case levelNotAccepted(claim: String, accepted: [String])
    case nonceNotAString
    case missingNonce

    var description: String {
        switch self {
        case .notASignedJWT: "the key attestation is not a signed JWT"
        case .wrongType: "the key attestation typ is not \(KeyProofCheck.keyAttestationType)"
        case .algorithmNotAccepted: "the key attestation alg is not accepted"
        case .missingCertificateChain: "the key attestation has no x5c"
        case .signatureInvalid: "the key attestation signature does not verify"
        case .untrustedChain: "the key attestation chain does not lead to a trusted wallet provider"
        case .time(let failure): "the key attestation " + failure.refusalText
        case .attestedKeysMissing: "attested_keys is not a non-empty array"
        case .attestedKeyNotPublic: "an attested key is not a public asymmetric JWK"
        case .missingLevel(let claim): "the key attestation has no \(claim)"
        case .levelNotAccepted(let claim, let accepted): "the key attestation \(claim) is none of \(accepted.joined(separator: " "))"
        case .nonceNotAString: "the key attestation nonce is not a string"
        case .missingNonce: "the key attestation carries no c_nonce"
        }
    }
}

/// Which `c_nonce` is wrong (`invalid_nonce`).
enum InvalidNonceReason: Equatable, Sendable, CustomStringConvertible {
    /// The proof's nonce is not a currently valid `c_nonce`.
    case proofNonceUnknown
    /// The key attestation's nonce is not a currently valid `c_nonce`.
    case keyAttestationNonceUnknown
    /// The key attestation in a proof's header carries another nonce than the proof.
    case keyAttestationNonceDiffers

    var description: String {
        switch self {
        case .proofNonceUnknown: "the nonce is not a valid c_nonce"
        case .keyAttestationNonceUnknown: "the key attestation nonce is not a valid c_nonce"
        case .keyAttestationNonceDiffers: "the key attestation nonce is not the proof nonce"
        }
    }
}

extension JWTTimeFailure {
    /// The failure as the rest of an `error_description` sentence about a proof.
    var refusalText: String {
        switch self {
        case .missing(let claim): "has no \(claim.rawValue)"
        case .notANumber(let claim): "\(claim.rawValue) is not a number"
        case .expired: "expired"
        case .notYetValid: "nbf lies in the future"
        case .issuedInFuture: "iat lies in the future"
        case .issuedTooLongAgo: "is too old"
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
        guard let object = proofs.objectValue else { throw .invalidProof(.proofsNotAnObject) }
        guard object.count == 1, let type = object.keys.first, let value = object[type] else {
            throw .invalidProof(.notExactlyOneProofType)
        }
        guard let entries = value.arrayValue, !entries.isEmpty else { throw .invalidProof(.emptyProofList(type: type)) }
        // Every jwt proof is signed by its own key, so more proofs than keys allowed can be
        // refused before any signature is checked.
        guard entries.count <= maxKeys else { throw .tooManyKeys(entries.count, limit: maxKeys) }
        var result = VerifiedKeyProofs()
        var signingKeys: Set<String> = []
        switch type {
        case "jwt":
            for entry in entries {
                guard let compact = entry.stringValue else { throw .invalidProof(.proofNotAString) }
                let proof = try verifyJWTProof(compact)
                guard signingKeys.insert(proof.signingKey.thumbprint).inserted else {
                    throw .invalidProof(.duplicateSigningKey)
                }
                if let nonce = proof.record.nonce { result.nonces.insert(nonce) }
                result.records.append(proof.record)
                result.keys.append(contentsOf: proof.record.keys)
            }
        case "attestation" where configuration.offersAttestationProofType:
            // App. F.3: exactly one key attestation, no proof of possession.
            guard entries.count == 1, let compact = entries[0].stringValue else {
                throw .invalidProof(.attestationProofCount)
            }
            let attestation = try verifyAttestation(compact)
            if let nonce = attestation.nonce { result.nonces.insert(nonce) }
            result.records.append(IssuerInspection.ProofRecord(
                type: "attestation", compact: compact, keys: attestation.keys, nonce: attestation.nonce, issuer: nil,
                keyAttestation: compact))
            result.keys = attestation.keys
        default:
            throw .invalidProof(.unsupportedProofType(type))
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
        do { jwt = try JWT(compact: compact) } catch { throw .invalidProof(.notASignedJWT) }
        let header = jwt.header
        guard header.typeMatches(Self.proofType) else { throw .invalidProof(.wrongType) }
        guard let alg = header.algorithm, configuration.proofAlgorithms.contains(alg), jwt.jws.algorithm != .hs256 else {
            throw .invalidProof(.algorithmNotAccepted(accepted: configuration.proofAlgorithms))
        }
        // App. F.1: kid, jwk and x5c exclude each other.
        let present = ["kid", "jwk", "x5c"].filter { header[$0] != nil }
        guard present.count <= 1 else { throw .invalidProof(.conflictingKeyHeaders(present)) }
        var attested: [JWK] = []
        var attestationCompact: String?
        if let member = header["key_attestation"] {
            guard let text = member.stringValue else { throw .invalidProof(.keyAttestationNotAString) }
            let attestation = try verifyAttestation(text)
            attested = attestation.keys
            attestationCompact = text
            if requireNonce, attestation.nonce != jwt.claims.nonce {
                throw .invalidNonce(.keyAttestationNonceDiffers)
            }
        } else if configuration.keyAttestation != nil {
            throw .invalidProof(.keyAttestationRequired)
        }
        let signingKey = try proofKey(header: header, attested: attested, jws: jwt.jws)
        let claims = jwt.claims
        guard let aud = claims["aud"] else { throw .invalidProof(.missingAudience) }
        guard aud.stringValue == credentialIssuer else { throw .invalidProof(.audienceMismatch) }
        do {
            try JWTTimeRules.proofOfPossession(maximumAge: maxAge, clockSkew: clockSkew).check(claims, at: now)
        } catch {
            throw .invalidProof(.time(error))
        }
        if requireNonce {
            guard let nonce = claims.nonce else { throw .invalidProof(.missingNonce) }
            guard validNonces.contains(nonce) else { throw .invalidNonce(.proofNonceUnknown) }
        }
        // App. F.1: iss is the client_id, and is omitted for anonymous pre-authorized access.
        let issuer = claims["iss"]
        if let issuer, issuer.stringValue == nil { throw .invalidProof(.issuerNotAString) }
        if let clientId {
            if let value = issuer?.stringValue, value != clientId { throw .invalidProof(.issuerMismatch) }
            if issuer == nil, requireIssuer { throw .invalidProof(.issuerMissing) }
        } else if issuer != nil {
            throw .invalidProof(.issuerNotAllowed)
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
            do { embedded = try header.jwk() } catch { throw .invalidProof(.jwkHeaderNotAPublicKey) }
            guard let key = embedded else { throw .invalidProof(.jwkHeaderNotAPublicKey) }
            if !attested.isEmpty, !attested.contains(where: { $0.thumbprint == key.thumbprint }) {
                throw .invalidProof(.keyNotAttested)
            }
            candidates = [key]
        } else if header["x5c"] != nil {
            guard attested.isEmpty else { throw .invalidProof(.certificateChainWithAttestation) }
            let chain: [X509Certificate]?
            do { chain = try header.certificateChain() } catch { throw .invalidProof(.certificateChainUnparsable) }
            guard let leaf = chain?.first, let key = try? JWK(publicKey: leaf.publicKey) else {
                throw .invalidProof(.certificateKeyUnusable)
            }
            candidates = [key]
        } else if let kid = header.keyID {
            guard !attested.isEmpty else { throw .invalidProof(.keyIDWithoutAttestation) }
            if let index = Int(kid), attested.indices.contains(index) {
                candidates = [attested[index]]
            } else {
                candidates = attested.filter { $0.keyID == kid }
            }
            guard !candidates.isEmpty else { throw .invalidProof(.keyIDNamesNoAttestedKey) }
        } else if !attested.isEmpty {
            candidates = attested
        } else {
            throw .invalidProof(.noKeyNamed)
        }
        for key in candidates {
            if (try? jws.verify(with: key)) != nil { return key }
        }
        throw .invalidProof(.signatureInvalid)
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
        do { jwt = try JWT(compact: compact) } catch { throw .invalidProof(.keyAttestation(.notASignedJWT)) }
        guard jwt.header.typeMatches(Self.keyAttestationType) else {
            throw .invalidProof(.keyAttestation(.wrongType))
        }
        guard let alg = jwt.header.algorithm, configuration.proofAlgorithms.contains(alg), jwt.jws.algorithm != .hs256 else {
            throw .invalidProof(.keyAttestation(.algorithmNotAccepted))
        }
        guard jwt.header["x5c"] != nil else { throw .invalidProof(.keyAttestation(.missingCertificateChain)) }
        do {
            try jwt.jws.verifyWithCertificateChain(trustAnchors: attestationAnchors, at: now, policy: .keyAttestationSigner)
        } catch JOSEError.invalidSignature {
            throw .invalidProof(.keyAttestation(.signatureInvalid))
        } catch {
            throw .invalidProof(.keyAttestation(.untrustedChain))
        }
        let claims = jwt.claims
        // App. D.1: exp MUST be present when the attestation is used with jwt proofs; an
        // attestation past its exp is refused without leeway.
        do {
            try JWTTimeRules(clockSkew: clockSkew, expirySkew: 0, required: [.issuedAt, .expiration]).check(claims, at: now)
        } catch {
            throw .invalidProof(.keyAttestation(.time(error)))
        }
        guard let entries = claims["attested_keys"]?.arrayValue, !entries.isEmpty else {
            throw .invalidProof(.keyAttestation(.attestedKeysMissing))
        }
        var keys: [JWK] = []
        for entry in entries {
            guard let members = entry.objectValue, let key = try? JWK(members: members), !key.isPrivate, key.keyType != .oct else {
                throw .invalidProof(.keyAttestation(.attestedKeyNotPublic))
            }
            keys.append(key)
        }
        if let requirement = configuration.keyAttestation {
            try Self.check(claims["key_storage"], accepted: requirement.keyStorage, name: "key_storage")
            try Self.check(claims["user_authentication"], accepted: requirement.userAuthentication, name: "user_authentication")
        }
        if let nonce = claims["nonce"], nonce.stringValue == nil { throw .invalidProof(.keyAttestation(.nonceNotAString)) }
        if requireNonce {
            guard let nonce = claims.nonce else { throw .invalidProof(.keyAttestation(.missingNonce)) }
            guard validNonces.contains(nonce) else { throw .invalidNonce(.keyAttestationNonceUnknown) }
        }
        return VerifiedAttestation(keys: keys, nonce: claims.nonce)
    }

    /// The attestation must claim at least one of the accepted levels (none asked: any).
    private static func check(_ value: JSONValue?, accepted: [String], name: String) throws(KeyProofProblem) {
        guard !accepted.isEmpty else { return }
        guard let levels = value?.stringArrayValue else { throw .invalidProof(.keyAttestation(.missingLevel(claim: name))) }
        guard levels.contains(where: accepted.contains) else {
            throw .invalidProof(.keyAttestation(.levelNotAccepted(claim: name, accepted: accepted)))
        }
    }
}
