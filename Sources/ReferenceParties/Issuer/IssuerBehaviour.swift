/// Deliberate deviations from a correct issuer, each one a mistake (or an attack) a
/// wallet must notice. All are off by default; change them at any time with
/// ``ReferenceIssuer/setBehaviour(_:)``. HTTP-level faults (status codes, delays,
/// malformed bodies per path and count) belong to the transport's fault injector; these
/// are the faults only the issuer itself can make.
public struct IssuerBehaviour: Sendable, Hashable {
    /// Sign credentials with a key (and certificate) outside the published PKI.
    public var signWithUnknownKey: Bool
    /// Bind credentials (`cnf.jwk`, MSO `deviceKey`) to a fresh key instead of the proof key.
    public var bindToWrongKey: Bool
    /// Issue a credential of another type (`vct` / `docType` with `.invalid` appended).
    public var issueWrongCredentialType: Bool
    /// Issue credentials whose validity already ended.
    public var issueExpiredCredentials: Bool
    /// Answer an encrypted credential request in plaintext JSON.
    public var answerPlaintextToEncryptedRequest: Bool
    /// Advertise `credential_response_encryption` without `credential_request_encryption`
    /// (lifts the configuration check against it).
    public var advertiseResponseEncryptionWithoutRequestKeys: Bool
    /// Answer the next this many DPoP-bearing token requests `use_dpop_nonce`, whatever
    /// nonce they carry (each answer hands out a fresh nonce).
    public var forcedTokenNonceChallenges: Int
    /// The same at the credential endpoint (401 with `WWW-Authenticate`).
    public var forcedCredentialNonceChallenges: Int
    /// Refuse every transaction code as wrong (`invalid_grant`).
    public var rejectEveryTxCode: Bool
    /// Answer every token request with this OAuth error (`invalid_grant` ...).
    public var tokenError: String?
    /// Answer every credential request with this error (`credential_request_denied` ...).
    public var credentialError: String?
    /// Redirect from the authorization endpoint with this `state` instead of the wallet's.
    public var redirectState: String?
    /// Redirect with this `iss` instead of the authorization server's identifier.
    public var redirectIssuer: String?
    /// Leave `iss` out of the authorization response.
    public var omitRedirectIssuer: Bool
    /// Return fewer credentials than keys (one only).
    public var issueFewerCredentials: Bool

    /// A well-behaved issuer.
    public init(signWithUnknownKey: Bool = false, bindToWrongKey: Bool = false, issueWrongCredentialType: Bool = false,
                issueExpiredCredentials: Bool = false, answerPlaintextToEncryptedRequest: Bool = false,
                advertiseResponseEncryptionWithoutRequestKeys: Bool = false, forcedTokenNonceChallenges: Int = 0,
                forcedCredentialNonceChallenges: Int = 0, rejectEveryTxCode: Bool = false, tokenError: String? = nil,
                credentialError: String? = nil, redirectState: String? = nil, redirectIssuer: String? = nil,
                omitRedirectIssuer: Bool = false, issueFewerCredentials: Bool = false) {
        self.signWithUnknownKey = signWithUnknownKey
        self.bindToWrongKey = bindToWrongKey
        self.issueWrongCredentialType = issueWrongCredentialType
        self.issueExpiredCredentials = issueExpiredCredentials
        self.answerPlaintextToEncryptedRequest = answerPlaintextToEncryptedRequest
        self.advertiseResponseEncryptionWithoutRequestKeys = advertiseResponseEncryptionWithoutRequestKeys
        self.forcedTokenNonceChallenges = forcedTokenNonceChallenges
        self.forcedCredentialNonceChallenges = forcedCredentialNonceChallenges
        self.rejectEveryTxCode = rejectEveryTxCode
        self.tokenError = tokenError
        self.credentialError = credentialError
        self.redirectState = redirectState
        self.redirectIssuer = redirectIssuer
        self.omitRedirectIssuer = omitRedirectIssuer
        self.issueFewerCredentials = issueFewerCredentials
    }
}
