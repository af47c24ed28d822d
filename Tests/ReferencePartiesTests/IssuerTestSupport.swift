import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// A fixed instant for the issuer tests (2026-01-01T00:00:00Z).
let issuerTestStart = Date(timeIntervalSince1970: 1_767_225_600)

/// A published vector under `../shared/vectors/`.
func issuerVector(_ relativePath: String) throws -> JSONObject {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let url = root.deletingLastPathComponent().appendingPathComponent("shared/vectors/\(relativePath)")
    return try JSONValue.parseObject(Array(try Data(contentsOf: url)))
}

/// The example named `name` in a vector file's `inputs` or `expected` lists.
func issuerVectorExample(_ file: JSONObject, _ name: String) throws -> JSONObject {
    for section in ["inputs", "expected"] {
        for example in try file[section]?.objectValue?.objectArray("examples") ?? [] where example["name"]?.stringValue == name {
            return example
        }
    }
    throw HarnessFailure("no example \(name)")
}

struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A reference issuer on a manual clock, and the wallet-side request builders the
/// tests use to talk to it the way the specifications' examples do.
struct IssuerHarness {
    let issuer: ReferenceIssuer
    let clock: ManualClock
    let credentialIssuer: String
    let authorizationServer: String

    static func make(_ configure: (inout ReferenceIssuerConfiguration) -> Void = { _ in }) async throws -> IssuerHarness {
        var configuration = ReferenceIssuerConfiguration()
        configure(&configuration)
        let clock = ManualClock(issuerTestStart)
        let issuer = try ReferenceIssuer(configuration: configuration, clock: clock)
        return IssuerHarness(issuer: issuer, clock: clock, credentialIssuer: await issuer.credentialIssuer,
                             authorizationServer: await issuer.authorizationServer)
    }

    /// `credentialIssuer + path`.
    func url(_ path: String) -> String { credentialIssuer + path }
    /// `authorizationServer + path`.
    func asURL(_ path: String) -> String { authorizationServer + path }

    func send(_ method: HTTPMethod, _ url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8]? = nil) async throws -> HTTPResponse {
        guard let target = URL(string: url) else { throw HarnessFailure("bad URL \(url)") }
        return await issuer.respond(to: HTTPRequest(method: method, url: target, headers: headers, body: body))
    }

    func get(_ url: String, headers: HTTPHeaders = HTTPHeaders()) async throws -> HTTPResponse {
        try await send(.get, url, headers: headers)
    }

    func postForm(_ url: String, _ pairs: [(String, String)], headers: HTTPHeaders = HTTPHeaders()) async throws -> HTTPResponse {
        var fields = headers
        fields["Content-Type"] = "application/x-www-form-urlencoded"
        return try await send(.post, url, headers: fields, body: Array(FormURLEncoding.encode(pairs).utf8))
    }

    func postJSON(_ url: String, _ body: JSONObject, headers: HTTPHeaders = HTTPHeaders()) async throws -> HTTPResponse {
        var fields = headers
        fields["Content-Type"] = "application/json"
        return try await send(.post, url, headers: fields, body: JSONValue.object(body).serializedBytes)
    }

    // MARK: Flows

    /// A fresh `c_nonce` from the nonce endpoint.
    func cNonce() async throws -> String {
        let response = try await send(.post, url("/nonce"))
        #expect(response.status == 200)
        return try json(response).string("c_nonce")
    }

    /// Makes a pre-authorized offer and redeems it at the token endpoint.
    func preAuthorizedToken(_ configurationIds: [String] = [IssuerCredentialConfiguration.pidId], clientId: String? = "wallet-dev",
                            dpop: DPoPKey? = nil, details: Bool = false) async throws -> TokenGrant {
        let offer = try await issuer.createOffer(.preAuthorized(configurationIds))
        var form: [(String, String)] = [("grant_type", "urn:ietf:params:oauth:grant-type:pre-authorized_code"),
                                        ("pre-authorized_code", offer.preAuthorizedCode ?? "")]
        if let clientId { form.append(("client_id", clientId)) }
        if details { form.append(("authorization_details", authorizationDetails(configurationIds))) }
        var headers = HTTPHeaders()
        if let dpop { headers["DPoP"] = try await dpop.proof(method: "POST", url: asURL("/token"), at: clock.now) }
        let response = try await postForm(asURL("/token"), form, headers: headers)
        #expect(response.status == 200, "token request refused: \(String(decoding: response.body, as: UTF8.self))")
        return try TokenGrant(json(response), dpop: dpop)
    }

    /// POSTs a credential request with the token (and a DPoP proof for a DPoP token).
    func credentialRequest(_ body: JSONObject, grant: TokenGrant, path: String = "/credential") async throws -> HTTPResponse {
        try await postJSON(url(path), body, headers: try await grant.authorization(method: "POST", url: url(path), at: clock.now))
    }

    func authorizationDetails(_ ids: [String], locations: String? = nil) -> String {
        JSONValue.array(ids.map { id in
            var entry: JSONObject = ["type": "openid_credential", "credential_configuration_id": .string(id)]
            if let locations { entry["locations"] = [.string(locations)] }
            return .object(entry)
        }).serialized
    }
}

/// What a token response gave.
struct TokenGrant {
    let accessToken: String
    let tokenType: String
    let refreshToken: String?
    let body: JSONObject
    var dpop: DPoPKey?

    init(_ body: JSONObject, dpop: DPoPKey?) throws {
        self.body = body
        self.accessToken = try body.string("access_token")
        self.tokenType = try body.string("token_type")
        self.refreshToken = try body.optionalString("refresh_token")
        self.dpop = dpop
    }

    func authorization(method: String, url: String, at now: Date, nonce: String? = nil) async throws -> HTTPHeaders {
        guard let dpop else { return ["Authorization": "Bearer " + accessToken] }
        return ["Authorization": "DPoP " + accessToken,
                "DPoP": try await dpop.proof(method: method, url: url, at: now, accessToken: accessToken, nonce: nonce)]
    }
}

/// A wallet's DPoP key and proof builder (RFC 9449 §4.2).
struct DPoPKey {
    let key: ECPrivateKey

    init() throws { key = try ECPrivateKey.generate(curve: .p256) }

    var thumbprint: String { JWK(publicKey: key.publicKey).thumbprint }

    func proof(method: String, url: String, at now: Date, accessToken: String? = nil, nonce: String? = nil,
               jti: String = UUID().uuidString, type: String = "dpop+jwt", signer: (any Signer)? = nil,
               jwk: JWK? = nil, claims extra: JSONObject = [:]) async throws -> String {
        var claims: JSONObject = ["jti": .string(jti), "htm": .string(method), "htu": .string(url),
                                  "iat": .integer(Int64(now.timeIntervalSince1970))]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(SHA256.digest(Array(accessToken.utf8)))) }
        if let nonce { claims["nonce"] = .string(nonce) }
        for (name, value) in extra { claims[name] = value }
        // JWS.sign writes only public JWKs; a private one goes in as a raw header to test refusals.
        let header = jwk ?? JWK(publicKey: key.publicKey)
        return try await JWT.sign(claims: try JWTClaims(claims), signer: signer ?? SoftwareSigner(key), type: type,
                                  jwk: header.isPrivate ? nil : header,
                                  additionalHeaders: header.isPrivate ? ["jwk": header.jsonValue] : [:]).compactSerialization
    }
}

/// A holder key and its `openid4vci-proof+jwt` builder (OpenID4VCI 1.0 App. F.1).
struct HolderKey {
    let key: ECPrivateKey

    init(curve: ECCurve = .p256) throws { key = try ECPrivateKey.generate(curve: curve) }

    var jwk: JWK { JWK(publicKey: key.publicKey) }

    func proof(audience: String, nonce: String?, issuer: String? = "wallet-dev", at now: Date,
               type: String = "openid4vci-proof+jwt", keyAttestation: String? = nil, includeJWK: Bool = true,
               keyID: String? = nil, extraClaims: JSONObject = [:]) async throws -> String {
        var claims: JSONObject = ["aud": .string(audience), "iat": .integer(Int64(now.timeIntervalSince1970))]
        if let nonce { claims["nonce"] = .string(nonce) }
        if let issuer { claims["iss"] = .string(issuer) }
        for (name, value) in extraClaims { claims[name] = value }
        var headers: JSONObject = [:]
        if let keyAttestation { headers["key_attestation"] = .string(keyAttestation) }
        return try await JWT.sign(claims: try JWTClaims(claims), signer: SoftwareSigner(key), type: type, keyID: keyID,
                                  jwk: includeJWK ? jwk : nil, additionalHeaders: headers).compactSerialization
    }
}

/// A wallet provider that signs key attestations (OpenID4VCI 1.0 App. D.1) under its own root.
struct TestWalletProvider {
    let root: X509Certificate
    let leaf: X509Certificate
    let key: ECPrivateKey

    init(now: Date = issuerTestStart) throws {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        key = try ECPrivateKey.generate(curve: .p256)
        root = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Test Wallet Provider Root")]),
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400)
        ).selfSigned(with: .ec(rootKey))
        leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "Test Wallet Provider")]),
            subjectPublicKeyInfoDER: key.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400)
        ).signed(by: root, key: .ec(rootKey))
    }

    func attest(_ keys: [JWK], nonce: String?, at now: Date, lifetime: TimeInterval = 3600,
                keyStorage: [String] = ["iso_18045_basic"], userAuthentication: [String] = ["iso_18045_basic"],
                type: String = "key-attestation+jwt") async throws -> String {
        var claims: JSONObject = [
            "iat": .integer(Int64(now.timeIntervalSince1970)),
            "exp": .integer(Int64(now.timeIntervalSince1970 + lifetime)),
            "attested_keys": .array(keys.map(\.jsonValue)),
            "key_storage": .array(keyStorage.map { .string($0) }),
            "user_authentication": .array(userAuthentication.map { .string($0) }),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        return try await JWT.sign(claims: try JWTClaims(claims), signer: SoftwareSigner(key), type: type, x5c: [leaf])
            .compactSerialization
    }
}

/// RFC 7636 S256: a random verifier and its challenge.
func pkcePair() throws -> (verifier: String, challenge: String) {
    let verifier = Base64URL.encode(try SystemRandom().bytes(count: 32))
    return (verifier, Base64URL.encode(SHA256.digest(Array(verifier.utf8))))
}

func json(_ response: HTTPResponse) throws -> JSONObject {
    try JSONValue.parseObject(response.body)
}

/// The `error` of a JSON error answer.
func oauthError(_ response: HTTPResponse) -> String? {
    (try? JSONValue.parseObject(response.body))?["error"]?.stringValue
}

/// The `error` in a `WWW-Authenticate` challenge.
func challengeError(_ response: HTTPResponse) -> String? {
    guard let header = response.headers["WWW-Authenticate"], let range = header.range(of: "error=\"") else { return nil }
    let rest = header[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
}

/// The query items of a redirect's `Location`.
func redirectParameters(_ response: HTTPResponse) throws -> [String: String] {
    guard let location = response.headers["Location"], let query = URLComponents(string: location)?.percentEncodedQuery else {
        throw HarnessFailure("no redirect")
    }
    return Dictionary(try FormURLEncoding.decode(query).fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
}

