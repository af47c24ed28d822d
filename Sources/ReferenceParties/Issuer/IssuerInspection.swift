import JOSE

/// What the reference issuer received and did, for tests to assert on: every exchange,
/// every refusal with its reason, the token and credential requests with their proofs
/// and DPoP keys, the notifications, and the credentials it issued with the keys they
/// are bound to.
public struct IssuerInspection: Sendable {
    /// Every request answered, in order.
    public internal(set) var exchanges: [Exchange] = []
    /// Every request refused, in order, with the error it was answered with.
    public internal(set) var refusals: [Refusal] = []
    /// Authorization requests (pushed or direct) that were accepted.
    public internal(set) var authorizationRequests: [AuthorizationRequestRecord] = []
    /// Token requests that reached grant processing.
    public internal(set) var tokenRequests: [TokenRequestRecord] = []
    /// DPoP proofs that verified (before the nonce check).
    public internal(set) var dpopProofs: [DPoPProofRecord] = []
    /// Credential requests that parsed.
    public internal(set) var credentialRequests: [CredentialRequestRecord] = []
    /// Deferred credential requests that parsed.
    public internal(set) var deferredRequests: [String] = []
    /// Notifications received (accepted or not).
    public internal(set) var notifications: [NotificationRecordEntry] = []
    /// The credentials issued, in order.
    public internal(set) var issuedCredentials: [IssuedCredential] = []

    /// One answered request.
    public struct Exchange: Sendable, Hashable {
        /// The method.
        public let method: String
        /// The path.
        public let path: String
        /// The status answered.
        public let status: Int
    }

    /// One refused request.
    public struct Refusal: Sendable, Hashable {
        /// The path.
        public let path: String
        /// The status answered.
        public let status: Int
        /// The error code (`invalid_grant`, `use_dpop_nonce`, `invalid_proof` ...).
        public let error: String
        /// The reason, as given in `error_description`.
        public let description: String?
    }

    /// An accepted authorization request.
    public struct AuthorizationRequestRecord: Sendable, Hashable {
        /// `client_id`.
        public let clientId: String
        /// `redirect_uri`.
        public let redirectURI: String
        /// `state`.
        public let state: String?
        /// The configurations asked for.
        public let credentialConfigurationIds: [String]
        /// Whether `authorization_details` was used (rather than scope only).
        public let usedAuthorizationDetails: Bool
        /// `issuer_state`.
        public let issuerState: String?
        /// Whether it came through PAR.
        public let pushed: Bool
        /// The DPoP key thumbprint the code is bound to, if any.
        public let dpopKeyThumbprint: String?
    }

    /// A token request.
    public struct TokenRequestRecord: Sendable, Hashable {
        /// `grant_type`.
        public let grantType: String
        /// `client_id`, if sent.
        public let clientId: String?
        /// `tx_code`, if sent.
        public let txCode: String?
        /// The DPoP key thumbprint of the proof, if one was sent.
        public let dpopKeyThumbprint: String?
        /// Whether `authorization_details` was sent.
        public let sentAuthorizationDetails: Bool
    }

    /// A DPoP proof that verified.
    public struct DPoPProofRecord: Sendable, Hashable {
        /// The path it was sent to.
        public let path: String
        /// The RFC 7638 thumbprint of its key.
        public let keyThumbprint: String
        /// `nonce`, if any.
        public let nonce: String?
        /// `ath`, if any.
        public let accessTokenHash: String?
        /// `jti`.
        public let jwtID: String
    }

    /// A credential request.
    public struct CredentialRequestRecord: Sendable, Hashable {
        /// `credential_identifier`, if used.
        public let credentialIdentifier: String?
        /// `credential_configuration_id`, if used.
        public let credentialConfigurationId: String?
        /// Whether the request came encrypted (`application/jwt`).
        public let encrypted: Bool
        /// The `enc` of `credential_response_encryption`, when the wallet asked for an
        /// encrypted response.
        public let responseEncryption: String?
        /// The proofs, as received.
        public let proofs: [ProofRecord]
        /// The DPoP key thumbprint of the access token.
        public let dpopKeyThumbprint: String?
    }

    /// One key proof.
    public struct ProofRecord: Sendable, Hashable {
        /// `jwt` or `attestation`.
        public let type: String
        /// The compact JWT.
        public let compact: String
        /// The keys it provides (the proof key, or the attested keys).
        public let keys: [JWK]
        /// `nonce`.
        public let nonce: String?
        /// `iss`.
        public let issuer: String?
        /// The key attestation in the header, if any.
        public let keyAttestation: String?
    }

    /// A notification.
    public struct NotificationRecordEntry: Sendable, Hashable {
        /// `notification_id`.
        public let notificationId: String
        /// `event`.
        public let event: String
        /// `event_description`.
        public let eventDescription: String?
        /// Whether it was accepted (204).
        public let accepted: Bool
    }

    /// An issued credential.
    public struct IssuedCredential: Sendable, Hashable {
        /// The configuration id.
        public let configurationId: String
        /// `dc+sd-jwt` or `mso_mdoc`.
        public let format: String
        /// The `credential` value as sent (SD-JWT, or base64url IssuerSigned).
        public let credential: String
        /// The key it is bound to (the proof key; a wrong one under ``IssuerBehaviour/bindToWrongKey``).
        public let boundKey: JWK
    }
}
