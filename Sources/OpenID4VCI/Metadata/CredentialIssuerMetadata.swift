import Foundation
import JOSE
import WalletCrypto
import WalletEncoding
import WalletStorage

/// Credential Issuer Metadata (OpenID4VCI 1.0 §12.2): endpoints, configurations,
/// encryption and batch parameters, display. Unknown members are ignored; known members
/// of the wrong type are an error that names them.
public struct CredentialIssuerMetadata: Sendable, Equatable {
    /// The well-known suffix (§12.2.2).
    public static let wellKnownSuffix = "openid-credential-issuer"
    /// The `typ` of `signed_metadata` (§12.2.3).
    public static let signedMetadataType = "openidvci-issuer-metadata+jwt"

    /// `credential_issuer`.
    public let credentialIssuer: String
    /// `authorization_servers` (empty: the issuer is its own authorization server).
    public let authorizationServers: [String]
    /// `credential_endpoint`.
    public let credentialEndpoint: URL
    /// `nonce_endpoint`.
    public let nonceEndpoint: URL?
    /// `deferred_credential_endpoint`.
    public let deferredCredentialEndpoint: URL?
    /// `notification_endpoint`.
    public let notificationEndpoint: URL?
    /// `credential_request_encryption`.
    public let requestEncryption: RequestEncryptionMetadata?
    /// `credential_response_encryption`.
    public let responseEncryption: ResponseEncryptionMetadata?
    /// `batch_credential_issuance.batch_size`: the most proofs one request may carry
    /// (nil: the issuer does not do batches, so one).
    public let batchSize: Int?
    /// `display`: how to show the issuer.
    public let display: [DisplayMetadata]
    /// The configuration ids in document order.
    public let configurationIds: [String]
    /// `credential_configurations_supported`.
    public let configurations: [String: CredentialConfiguration]
    /// Whether `signed_metadata` was present and its signature verified (its values then
    /// take precedence): under the trust anchors when the wallet has issuer anchors, else
    /// only under the `x5c` certificate it carries (see ``isSignerTrusted``).
    public let isSigned: Bool
    /// Whether `signed_metadata`'s signer chained to the issuer trust anchors with a
    /// signing certificate whose subjectAltName names the credential issuer: the metadata
    /// is then vouched for by a trusted party, not only by the issuer's TLS server.
    public let isSignerTrusted: Bool

    /// The configuration `id`, if the issuer has it.
    public func configuration(_ id: String) -> CredentialConfiguration? { configurations[id] }

    /// The authorization server to use for a grant that names `preferred` (or none): the
    /// named one when the issuer lists it (§4.1.1), else the first listed, else the
    /// issuer itself (§12.2.4).
    func authorizationServer(preferred: String?) -> String {
        if let preferred, authorizationServers.contains(preferred) { return preferred }
        return authorizationServers.first ?? credentialIssuer
    }

    /// Reads a metadata document the app already has (cached, or fetched itself) for
    /// `credentialIssuer`, with the checks `resolveOffer(_:)` applies: the identifier,
    /// `https` endpoints (loopback `http` when `allowHTTP`), `signed_metadata` (chained to
    /// `trustAnchors` when there are any) and the members' types.
    public init(json object: JSONObject, credentialIssuer: String, allowHTTP: Bool = false,
                trustAnchors: [X509Certificate] = [], now: Date) throws(MetadataProblem) {
        try self.init(json: object, expectedIssuer: credentialIssuer, policy: URLPolicy(allowsLoopbackHTTP: allowHTTP),
                      trustAnchors: trustAnchors, now: now)
    }

    /// Reads a metadata document fetched for `expectedIssuer`. When `signed_metadata` is
    /// present it must verify (with its `x5c` leaf, chained to `trustAnchors` when there
    /// are any) and name the issuer in `sub`; its members then replace the plain ones.
    init(json plain: JSONObject, expectedIssuer: String, policy: URLPolicy, trustAnchors: [X509Certificate],
         now: Date) throws(MetadataProblem) {
        var object = plain
        var signed = false
        if let signedValue = plain["signed_metadata"] {
            guard let compact = signedValue.stringValue else { throw .invalidMember("signed_metadata") }
            let claims = try Self.verifySignedMetadata(compact, expectedIssuer: expectedIssuer,
                                                       trustAnchors: trustAnchors, now: now)
            for (name, value) in claims where !["iss", "sub", "iat", "exp", "nbf", "jti"].contains(name) {
                object[name] = value
            }
            signed = true
        }
        isSigned = signed
        isSignerTrusted = signed && !trustAnchors.isEmpty
        let issuer = object["credential_issuer"]?.stringValue
        // §12.2.2: the identifier in the document must be the one it was fetched for.
        guard issuer == expectedIssuer else { throw .identifierMismatch(expected: expectedIssuer, actual: issuer) }
        credentialIssuer = expectedIssuer
        let reader = MemberReader(object: object, policy: policy)
        authorizationServers = try reader.optionalStrings("authorization_servers") ?? []
        guard let endpoint = try reader.optionalURL("credential_endpoint") else { throw .missingEndpoint("credential_endpoint") }
        credentialEndpoint = endpoint
        nonceEndpoint = try reader.optionalURL("nonce_endpoint")
        deferredCredentialEndpoint = try reader.optionalURL("deferred_credential_endpoint")
        notificationEndpoint = try reader.optionalURL("notification_endpoint")
        requestEncryption = try reader.optionalObject("credential_request_encryption").map {
            (members) throws(MetadataProblem) in try RequestEncryptionMetadata(json: members)
        }
        responseEncryption = try reader.optionalObject("credential_response_encryption").map {
            (members) throws(MetadataProblem) in try ResponseEncryptionMetadata(json: members)
        }
        if let batch = try reader.optionalObject("batch_credential_issuance") {
            guard let size = batch["batch_size"]?.intValue, size >= 2 else {
                throw .invalidMember("batch_credential_issuance.batch_size")
            }
            batchSize = size
        } else {
            batchSize = nil
        }
        display = try Self.display(object["display"], member: "display")
        guard let configurationsObject = object["credential_configurations_supported"]?.objectValue else {
            throw .invalidMember("credential_configurations_supported")
        }
        var configurations: [String: CredentialConfiguration] = [:]
        for (id, value) in configurationsObject {
            guard let members = value.objectValue else { throw .invalidMember("credential_configurations_supported.\(id)") }
            configurations[id] = try CredentialConfiguration(id: id, json: members)
        }
        configurationIds = configurationsObject.keys
        self.configurations = configurations
    }

    private static func verifySignedMetadata(_ compact: String, expectedIssuer: String, trustAnchors: [X509Certificate],
                                             now: Date) throws(MetadataProblem) -> JSONObject {
        do {
            return try signedMetadataClaims(compact, expectedIssuer: expectedIssuer, trustAnchors: trustAnchors, now: now)
        } catch {
            throw .invalidSignedMetadata(error)
        }
    }

    /// §12.2.3: `typ`, a signature by the `x5c` leaf (chained to the anchors when there
    /// are any, as a signing certificate naming the issuer in its subjectAltName, as an
    /// SD-JWT VC issuer's must: another party's certificate under the same anchors, a
    /// document signer of another issuer say, does not vouch for this one), `iat`, and
    /// `sub` naming the issuer.
    private static func signedMetadataClaims(_ compact: String, expectedIssuer: String, trustAnchors: [X509Certificate],
                                             now: Date) throws(JOSEError) -> JSONObject {
        let jwt = try JWT(compact: compact)
        guard jwt.header.typeMatches(signedMetadataType) else {
            throw .typeMismatch(expected: signedMetadataType, actual: jwt.header.type)
        }
        if trustAnchors.isEmpty {
            // No anchors configured: the signature is checked with the x5c leaf (integrity,
            // not trust; the document was fetched over TLS from the issuer anyway).
            guard let leaf = try jwt.header.certificateChain()?.first else { throw .untrusted(.missingCertificate) }
            try jwt.jws.verify(with: try JOSEError.wrapCertificateKey(leaf))
        } else {
            try jwt.jws.verifyWithCertificateChain(trustAnchors: trustAnchors, at: now, policy: .sdJWTVCIssuer(expectedIssuer))
        }
        try jwt.validate(JWTValidationOptions(now: now, requiredClaims: ["iat"]))
        guard jwt.claims.subject == expectedIssuer else { throw .invalidClaim("sub") }
        return jwt.claims.members
    }

    /// Reads a `display` array.
    static func display(_ value: JSONValue?, member: String) throws(MetadataProblem) -> [DisplayMetadata] {
        guard let value else { return [] }
        guard let entries = value.arrayValue else { throw .invalidMember(member) }
        var display: [DisplayMetadata] = []
        for entry in entries {
            guard let members = entry.objectValue, let parsed = try? DisplayMetadata(json: members) else {
                throw .invalidMember(member)
            }
            display.append(parsed)
        }
        return display
    }
}

extension JOSEError {
    /// The public key of a certificate as a JOSE key, or a `certificateChain` failure.
    static func wrapCertificateKey(_ certificate: X509Certificate) throws(JOSEError) -> PublicKey {
        do { return try certificate.publicKey } catch {
            throw .untrusted(.unsupportedLeafKey)
        }
    }
}

/// `credential_request_encryption` (§12.2.4): the issuer's keys for encrypted requests.
public struct RequestEncryptionMetadata: Sendable, Equatable {
    /// `jwks`: the issuer's public encryption keys (an array, or a JWK Set object).
    public let keys: [JWK]
    /// `enc_values_supported`.
    public let encValues: [String]
    /// `zip_values_supported`.
    public let zipValues: [String]
    /// `encryption_required`.
    public let encryptionRequired: Bool

    init(json members: JSONObject) throws(MetadataProblem) {
        let name = "credential_request_encryption"
        var keyValues: [JSONValue]
        if let array = members["jwks"]?.arrayValue {
            keyValues = array
        } else if let set = members["jwks"]?.objectValue, let array = set["keys"]?.arrayValue {
            // The errata's form: a JWK Set.
            keyValues = array
        } else {
            throw .invalidMember("\(name).jwks")
        }
        var keys: [JWK] = []
        for value in keyValues {
            guard let object = value.objectValue, let key = try? JWK(members: object), !key.isPrivate else {
                throw .invalidMember("\(name).jwks")
            }
            keys.append(key)
        }
        self.keys = keys
        guard let enc = members["enc_values_supported"]?.stringArrayValue, !enc.isEmpty else {
            throw .invalidMember("\(name).enc_values_supported")
        }
        encValues = enc
        zipValues = members["zip_values_supported"]?.stringArrayValue ?? []
        guard let required = members["encryption_required"]?.boolValue else {
            throw .invalidMember("\(name).encryption_required")
        }
        encryptionRequired = required
    }
}

/// `credential_response_encryption` (§12.2.4): what the issuer can encrypt responses with.
public struct ResponseEncryptionMetadata: Sendable, Equatable {
    /// `alg_values_supported`.
    public let algValues: [String]
    /// `enc_values_supported`.
    public let encValues: [String]
    /// `zip_values_supported`.
    public let zipValues: [String]
    /// `encryption_required`.
    public let encryptionRequired: Bool

    init(json members: JSONObject) throws(MetadataProblem) {
        let name = "credential_response_encryption"
        guard let alg = members["alg_values_supported"]?.stringArrayValue, !alg.isEmpty else {
            throw .invalidMember("\(name).alg_values_supported")
        }
        guard let enc = members["enc_values_supported"]?.stringArrayValue, !enc.isEmpty else {
            throw .invalidMember("\(name).enc_values_supported")
        }
        guard let required = members["encryption_required"]?.boolValue else {
            throw .invalidMember("\(name).encryption_required")
        }
        algValues = alg
        encValues = enc
        zipValues = members["zip_values_supported"]?.stringArrayValue ?? []
        encryptionRequired = required
    }
}

/// Reads typed members of a metadata object, naming the member on failure.
struct MemberReader {
    let object: JSONObject
    let policy: URLPolicy

    func optionalString(_ name: String) throws(MetadataProblem) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else { throw .invalidMember(name) }
        return text
    }

    func optionalStrings(_ name: String) throws(MetadataProblem) -> [String]? {
        guard let value = object[name] else { return nil }
        guard let strings = value.stringArrayValue else { throw .invalidMember(name) }
        return strings
    }

    func optionalBool(_ name: String) throws(MetadataProblem) -> Bool? {
        guard let value = object[name] else { return nil }
        guard let flag = value.boolValue else { throw .invalidMember(name) }
        return flag
    }

    func optionalObject(_ name: String) throws(MetadataProblem) -> JSONObject? {
        guard let value = object[name] else { return nil }
        guard let members = value.objectValue else { throw .invalidMember(name) }
        return members
    }

    func optionalURL(_ name: String) throws(MetadataProblem) -> URL? {
        guard let text = try optionalString(name) else { return nil }
        guard let url = policy.url(text) else { throw .insecureURL(text) }
        return url
    }
}
