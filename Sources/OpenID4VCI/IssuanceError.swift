import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// Why an issuance failed: the value a session's `.failed` state carries and what
/// `resolveOffer(_:)` throws. The four cases are the spec's; each nests a typed reason.
public enum IssuanceError: Error, Equatable, Sendable {
    /// The offer (URI or JSON), or what it points at (the issuer's or authorization
    /// server's metadata, the configuration asked for), could not be parsed or resolved.
    case invalidOffer(InvalidOfferReason)
    /// The authorization or token step was rejected. `oauthError` is the OAuth `error`
    /// code the server answered with (`invalid_grant`, `access_denied`, `use_dpop_nonce`
    /// ...), nil when the wallet itself stopped the step (a `state` mismatch ...).
    case authorizationFailed(oauthError: String?, reason: AuthorizationFailureReason)
    /// The issuer refused or could not fulfil the credential request, or what it returned
    /// failed a check. `oauthError` is the issuer's `error` code when it answered with one
    /// (`invalid_proof`, `invalid_nonce`, `invalid_transaction_id` ...).
    case credentialRequestFailed(oauthError: String?, reason: CredentialRequestFailureReason)
    /// Anything else: transport, the secure area or store, a signer, cancellation.
    case unexpected(UnexpectedIssuanceFailure)

    /// The OAuth error code the server answered with, if any.
    public var oauthError: String? {
        switch self {
        case .authorizationFailed(let code, _), .credentialRequestFailed(let code, _): code
        case .invalidOffer, .unexpected: nil
        }
    }
}

/// What is wrong with an offer or with what it points at.
public enum InvalidOfferReason: Equatable, Sendable {
    /// The input is neither a URI with `credential_offer` / `credential_offer_uri` nor a JSON object.
    case unrecognizedInput
    /// The URI carries both `credential_offer` and `credential_offer_uri`, or a query that does not decode.
    case ambiguousOrMalformedURI
    /// The offer is not JSON.
    case notJSON(JSONError)
    /// A member of the offer is missing or has the wrong type or value; the value names it
    /// (`credential_issuer`, `grants.…pre-authorized_code`, `tx_code.length` ...).
    case invalidMember(String)
    /// Fetching `credential_offer_uri` answered with this HTTP status.
    case fetchFailed(status: Int)
    /// A URL that is not `https` (or `http` to a loopback host when the app allows it).
    case insecureURL(String)
    /// The configuration id is not in the issuer's `credential_configurations_supported`
    /// (or, for a session started from an offer, not among the offered ones).
    case unknownConfiguration(String)
    /// The configuration's format is not one the wallet stores (`dc+sd-jwt`, `mso_mdoc`).
    case unsupportedFormat(String)
    /// The Credential Issuer Metadata could not be used.
    case issuerMetadata(MetadataProblem)
    /// The Authorization Server Metadata could not be used.
    case authorizationServerMetadata(MetadataProblem)
}

/// What is wrong with a metadata document (issuer, authorization server, JWT VC issuer).
public enum MetadataProblem: Error, Equatable, Sendable {
    /// The well-known URL answered with this HTTP status (every candidate URL, for
    /// authorization servers).
    case unavailable(status: Int)
    /// The document is not a JSON object.
    case notJSON(JSONError)
    /// A member is missing or has the wrong type or value; the value names it.
    case invalidMember(String)
    /// The document's identifier (`credential_issuer`, `issuer`) is not the one it was fetched for.
    case identifierMismatch(expected: String, actual: String?)
    /// `signed_metadata` does not verify, or its chain is not trusted.
    case invalidSignedMetadata(JOSEError)
    /// An endpoint the flow needs is absent (`token_endpoint`, `pushed_authorization_request_endpoint` ...).
    case missingEndpoint(String)
    /// An endpoint or identifier URL is not `https` (nor an allowed loopback `http`).
    case insecureURL(String)
}

/// Why the authorization or token step failed.
public enum AuthorizationFailureReason: Equatable, Sendable {
    /// The server answered with an error (the OAuth code is in the enclosing case).
    case rejected(status: Int, description: String?)
    /// The token (or PAR) response is not what RFC 6749 / RFC 9126 describe.
    case malformedResponse(ResponseProblem)
    /// The redirect's `state` is not the one this session sent.
    case stateMismatch
    /// The redirect's `iss` is absent where the server promised it (RFC 9207), or names another server.
    case issuerMismatch(expected: String, actual: String?)
    /// The redirect is not to this wallet's `redirectUri`, or carries neither `code` nor `error`.
    case invalidRedirect
    /// The offer's grants cannot be used with this authorization server (no pre-authorized
    /// code and no authorization endpoint).
    case noUsableGrant
    /// The credential has no refresh token (or no issuance context) to renew it with, or
    /// the issuer no longer lists the authorization server that issued the token.
    case refreshTokenUnavailable
    /// The authorization server does not support PKCE with S256.
    case pkceUnsupported
}

/// Why the credential (or deferred) request failed.
public enum CredentialRequestFailureReason: Equatable, Sendable {
    /// The issuer answered with an error (the OAuth code is in the enclosing case).
    case rejected(status: Int, description: String?)
    /// The response is not what OpenID4VCI 1.0 §8.3 / §9.2 describe.
    case malformedResponse(ResponseProblem)
    /// A credential failed a check; nothing was stored.
    case invalidCredential(CredentialCheckFailure)
    /// Credential request or response encryption could not be used as the policy requires.
    case encryption(EncryptionFailure)
    /// The configuration requires key attestations and the wallet has no provider.
    case keyAttestationUnavailable
    /// The configuration accepts no proof type or algorithm the wallet can produce
    /// (the value lists what it accepts), or asks for no holder binding at all.
    case unsupportedProof([String])
    /// More credentials came back than keys were proven.
    case unexpectedCredentialCount(expected: Int, received: Int)
}

/// What is wrong with a response body or its framing.
public enum ResponseProblem: Error, Equatable, Sendable {
    /// A status code the step does not expect (5xx, a 3xx ...).
    case unexpectedStatus(Int)
    /// The body is not JSON (or not a JSON object).
    case notJSON(JSONError)
    /// A member is missing or has the wrong type or value; the value names it.
    case invalidMember(String)
}

/// Why an issued credential was refused.
public enum CredentialCheckFailure: Error, Equatable, Sendable {
    /// The credential is not a string of the format's encoding (SD-JWT compact form,
    /// base64url of an mdoc `IssuerSigned`).
    case malformed
    /// The SD-JWT VC failed verification (signature, chain, `typ`, `vct`, time window ...).
    case sdJWT(SDJWTError)
    /// The mdoc failed verification (issuerAuth signature or chain, digests, validity ...).
    case mdoc(MdocError)
    /// The credential is bound to a key the wallet did not prove (`cnf.jwk`, MSO `deviceKey`),
    /// or two credentials are bound to the same key.
    case holderKeyMismatch
    /// The `vct` or `docType` is not the configuration's.
    case typeMismatch(expected: String, actual: String)
    /// Issuer anchors are configured but the credential carries no certificate chain.
    case missingCertificateChain
    /// The SD-JWT VC issuer's key could not be found in its JWT VC Issuer Metadata.
    case issuerKeyUnavailable(MetadataProblem)
}

/// Why encryption of the credential request or response failed.
public enum EncryptionFailure: Error, Equatable, Sendable {
    /// The policy is `.required` but the issuer does not advertise response encryption.
    case notOfferedByIssuer
    /// The issuer advertises response encryption without `credential_request_encryption`
    /// keys (OpenID4VCI 1.0 §12.2.4 requires both): refused as non-conformant.
    case requestEncryptionKeysMissing
    /// No key agreement (`ECDH-ES` on an EC key) or content encryption (`A128GCM`,
    /// `A192GCM`, `A256GCM`) in common with the issuer.
    case noCommonAlgorithm
    /// The issuer answered an encrypted request in plaintext (OpenID4VCI 1.0 §10).
    case plaintextResponse
    /// The encrypted response does not decrypt with the wallet's response key.
    case undecryptable(JOSEError)
    /// The request could not be encrypted to the issuer's key.
    case requestEncryptionFailed(JOSEError)
}

/// The failures outside the protocol exchange itself.
public enum UnexpectedIssuanceFailure: Equatable, Sendable {
    /// No HTTP response could be obtained (timeout, connection, cancellation of the request).
    case transport(HTTPError)
    /// A URL the flow would call is not `https` (nor an allowed loopback `http`).
    case insecureURL(String)
    /// A holder or DPoP key could not sign or agree (a cancelled prompt arrives as `.userCancelled`).
    case keyOperation(KeyOperationError)
    /// The secure area or the credential store failed.
    case storage(StorageError)
    /// The key attestation provider failed.
    case keyAttestation(KeyAttestationError)
    /// Building a JWT or JWE failed.
    case encoding(JOSEError)
    /// The random source failed.
    case randomSourceFailed
    /// The session was cancelled (`cancel()`) before it stored anything.
    case cancelled
    /// No stored credential has this id.
    case credentialNotFound(CredentialId)
    /// `resumeDeferred` was asked for a credential that is not deferred.
    case notDeferred(CredentialId)
    /// The credential was not issued by this client (it has no issuance context).
    case noIssuanceContext(CredentialId)
    /// The stored record names another credential issuer than its (encrypted) issuance
    /// context was written for: the record was altered, and its tokens are not sent there.
    case issuerChanged(CredentialId)
    /// The policy asks for fewer than one instance.
    case invalidPolicy
    /// The driver returned another number of signed proofs than there are keys to prove.
    case proofCountMismatch(expected: Int, actual: Int)
}

extension IssuanceError {
    /// Maps a JOSE failure met while signing (a proof, a DPoP proof) so that a signer's
    /// `KeyOperationError` reaches the app unchanged.
    static func signing(_ error: JOSEError) -> IssuanceError {
        if case .keyOperation(let keyError) = error { return .unexpected(.keyOperation(keyError)) }
        return .unexpected(.encoding(error))
    }

    /// Maps a storage failure; a cancelled or failed authentication of a key stays a storage case.
    static func storage(_ error: StorageError) -> IssuanceError { .unexpected(.storage(error)) }
}
