import CBOR
import COSE
import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage
@testable import OpenID4VCI

/// The shared vectors (../shared/vectors, next to the repository).
enum Vectors {
    static func url(_ relativePath: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("../shared/vectors/\(relativePath)")
    }

    static func object(_ relativePath: String) throws -> JSONObject {
        try JSONValue.parseObject(Array(try Data(contentsOf: url(relativePath))))
    }

    /// The example named `name` among `inputs.examples` (or `expected.examples`).
    static func example(_ relativePath: String, _ name: String) throws -> JSONObject {
        let file = try object(relativePath)
        for section in ["inputs", "expected"] {
            for entry in file[section]?["examples"]?.arrayValue ?? [] where entry["name"]?.stringValue == name {
                return entry.objectValue ?? [:]
            }
        }
        throw VectorError.missing(name)
    }

    enum VectorError: Error { case missing(String) }
}

/// A root and a leaf certificate with the leaf's key: an issuer's signing PKI. The root
/// is an IACA-shaped CA (pathLenConstraint 0); the leaf signs SD-JWT VCs (its
/// subjectAltName URI names the issuer) and mdocs (it has the document signer EKU).
struct TestPKI: Sendable {
    let anchor: X509Certificate
    let leaf: X509Certificate
    let leafKey: ECPrivateKey

    init(name: String, issuer: String = "https://issuer.example", now: Date = Date()) throws {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        leafKey = try ECPrivateKey.generate(curve: .p256)
        anchor = try CertificateBuilder.iaca(
            subject: try DistinguishedName([(.commonName, "\(name) root")]),
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400)
        ).selfSigned(with: .ec(rootKey))
        leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "\(name) signer")]),
            subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400),
            extendedKeyUsage: [ExtendedKeyUsageOID.mdocDocumentSigner], subjectAlternativeNames: [.uri(issuer)]
        ).signed(by: anchor, key: .ec(rootKey))
    }

    var signer: SoftwareSigner { SoftwareSigner(leafKey) }
}

/// Fixed-size random bytes counting up, so that tests see distinct but stable values.
final class CountingRandom: RandomSource, @unchecked Sendable {
    private let lock = NSLock()
    private var counter: UInt8 = 0
    func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        lock.lock(); defer { lock.unlock() }
        counter &+= 1
        return (0..<count).map { UInt8(truncatingIfNeeded: Int(counter) &+ $0) }
    }
}

/// The pairs of a form body or query string (empty when it does not decode).
func formPairs(_ bytes: [UInt8]?) -> [(String, String)] {
    ((try? FormURLEncoding.decode(bytes ?? []))?.fields ?? []).map { ($0.name, $0.value) }
}

func json(_ response: HTTPResponse) -> JSONObject { (try? JSONValue.parseObject(response.body)) ?? [:] }

func jsonResponse(_ status: Int = 200, _ object: JSONObject, headers: HTTPHeaders = [:]) -> HTTPResponse {
    var all = headers
    all["Content-Type"] = "application/json"
    return HTTPResponse(status: status, headers: all, body: JSONValue.object(object).serializedBytes)
}

func oauthError(_ status: Int, _ code: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
    jsonResponse(status, ["error": .string(code)], headers: headers)
}

/// A compact, scriptable OpenID4VCI issuer and authorization server for the client's
/// tests: written here from the spec for the client's unit and session tests (the
/// reference issuer in ReferenceParties is the independent counterpart of the
/// end-to-end tests). It answers in-process as an `HTTPClient`.
///
/// It mints on `clock`: a test that gives the wallet a `ManualClock` gives the issuer the
/// same one, or a slow run (a loaded machine, a sanitizer) lets the wall clock run ahead
/// of the wallet's frozen one until an `iat` lies beyond the verifier's skew.
final class TestIssuer: HTTPClient, @unchecked Sendable {
    struct Options {
        var format: CredentialFormat = .sdJwtVc
        var txCode: String?
        var offerAuthorizationCode = false
        var dpop = false
        /// Answer the first N DPoP requests at the token endpoint with use_dpop_nonce.
        var tokenNonceChallenges = 0
        /// Answer the first N DPoP requests at the credential endpoint with use_dpop_nonce.
        var credentialNonceChallenges = 0
        var par = true
        var requirePAR = false
        var issParameter = true
        var refreshTokens = false
        var credentialIdentifiers: [String]?
        var batchSize: Int?
        var deferral = Deferral.none
        var requestEncryption: RequestEncryptionSetup?
        var responseEncryption: ResponseEncryptionSetup?
        /// Require a key attestation from this wallet provider.
        var keyAttestationAnchor: X509Certificate?
        var nonceEndpoint = true
        var notificationEndpoint = true
        /// Sign SD-JWT VCs with this key instead of the published one.
        var rogueSigner: ECPrivateKey?
        /// Bind every credential to this key instead of the proof's.
        var bindTo: PublicKey?
        /// Put the issuer's x5c in SD-JWT VC headers.
        var x5c = true
        /// Canned answers by path, used once each in order.
        var faults: [String: [HTTPResponse]] = [:]
        /// Sign mdoc issuerAuth with `alg` in the unprotected bucket only.
        var unprotectedMdocAlgorithm = false
        /// The metadata's `authorization_servers` (none: the issuer is its own).
        var authorizationServers: [String]?
        var delayAtCredential: Duration?
        /// Runs when a credential request arrives, before it is answered (e.g. a
        /// presentation the wallet makes while a renewal waits for the issuer).
        var onCredentialRequest: (@Sendable () async -> Void)?
        /// Runs when a deferred credential request arrives, before it is answered.
        var onDeferredRequest: (@Sendable () async -> Void)?
        /// Runs when a token request arrives, before it is answered.
        var onTokenRequest: (@Sendable () async -> Void)?
        /// Runs when a notification arrives, before it is answered.
        var onNotification: (@Sendable () async -> Void)?
        /// The configuration id (default `identity`, or `mdl` for mdoc).
        var configurationName: String?
        /// Issue credentials of this `vct` / `docType` instead of the configuration's.
        var issuedType: String?
        /// The authorization server's `code_challenge_methods_supported`.
        var codeChallengeMethods = ["S256"]
    }

    enum Deferral: Equatable { case none, accepted, legacy }

    struct RequestEncryptionSetup {
        var key: ECPrivateKey
        var kid = "issuer-enc-1"
        var enc = ["A128GCM", "A256GCM"]
        var required = false
        var publishKeys = true
    }

    struct ResponseEncryptionSetup {
        var enc = ["A128GCM", "A256GCM"]
        var required = false
        /// Answer in plaintext although encryption was asked for.
        var answerInPlaintext = false
        /// Encrypt with this `enc` whatever the wallet asked for.
        var answerWithEnc: ContentEncryptionAlgorithm?
    }

    static let vct = "https://credentials.example/identity_credential"
    static let docType = "org.iso.18013.5.1.mDL"

    let base: String
    var options: Options
    let pki: TestPKI
    /// The issuer's time: credentials' `iat`/`exp` and mdoc validity, key attestation checks.
    let clock: any WalletClock
    private let lock = NSLock()
    private(set) var log: [HTTPRequest] = []
    private(set) var notifications: [JSONObject] = []
    private(set) var credentialRequests: [JSONObject] = []
    private var codes: [String: (txCode: String?, used: Bool)] = [:]
    private var pushed: [String: [(String, String)]] = [:]
    private var authorizationCodes: [String: [(String, String)]] = [:]
    private var tokens: [String: String?] = [:]   // access token -> DPoP jkt
    private var refreshTokens: [String: String?] = [:]
    private var nonces: Set<String> = []
    private var dpopNonce = "dpop-nonce-0"
    private var tokenChallenges = 0
    private var credentialChallenges = 0
    private var transactions: [String: (proofKeys: [PublicKey], polls: Int)] = [:]
    private var counter = 0

    init(base: String = "https://issuer.example", options: Options = Options(), clock: any WalletClock = SystemClock()) throws {
        self.base = base
        self.options = options
        self.clock = clock
        self.pki = try TestPKI(name: "Test issuer", issuer: base, now: clock.now)
    }

    var configurationId: String { options.configurationName ?? (options.format == .msoMdoc ? "mdl" : "identity") }

    private func next(_ prefix: String) -> String {
        lock.lock(); defer { lock.unlock() }
        counter += 1
        return "\(prefix)-\(counter)"
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    // MARK: Offers and the browser

    /// A pre-authorized offer (with tx_code when the options have one) as a deep link.
    func offerURI() -> String {
        let code = next("pre-auth")
        locked { codes[code] = (options.txCode, false) }
        var grants: JSONObject = [:]
        var grant: JSONObject = ["pre-authorized_code": .string(code)]
        if let tx = options.txCode {
            grant["tx_code"] = ["length": .integer(Int64(tx.count)), "input_mode": "numeric", "description": "Sent by SMS"]
        }
        if options.offerAuthorizationCode {
            grants["authorization_code"] = ["issuer_state": "issuer-state-1"]
        } else {
            grants[CredentialOffer.preAuthorizedGrantType] = .object(grant)
        }
        let offer: JSONValue = ["credential_issuer": .string(base), "credential_configuration_ids": [.string(configurationId)],
                                "grants": .object(grants)]
        return "openid-credential-offer://?credential_offer=" + FormURLEncoding.percentEncode(offer.serialized)
    }

    /// What the browser does: the authorization endpoint approves and redirects.
    func authorize(_ url: String, state overrideState: String? = nil) -> String {
        guard let components = URLComponents(string: url) else { return "" }
        let query = formPairs(Array((components.percentEncodedQuery ?? "").utf8))
        var parameters = query
        if let uri = query.first(where: { $0.0 == "request_uri" })?.1 {
            parameters = locked { pushed[uri] } ?? []
        }
        let state = overrideState ?? parameters.first { $0.0 == "state" }?.1 ?? ""
        let redirect = parameters.first { $0.0 == "redirect_uri" }?.1 ?? ""
        let code = next("code")
        locked { authorizationCodes[code] = parameters }
        var answer = [("code", code), ("state", state)]
        if options.issParameter { answer.append(("iss", base)) }
        return redirect + "?" + FormURLEncoding.encode(answer)
    }

    // MARK: HTTP

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        locked { log.append(request) }
        let path = request.url.path
        if let canned = locked({ () -> HTTPResponse? in
            guard var queue = options.faults[path], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            options.faults[path] = queue
            return first
        }) {
            return canned
        }
        if path == "/credential", let hook = locked({ options.onCredentialRequest }) { await hook() }
        if path == "/deferred", let hook = locked({ options.onDeferredRequest }) { await hook() }
        if path == "/token", let hook = locked({ options.onTokenRequest }) { await hook() }
        if path == "/notification", let hook = locked({ options.onNotification }) { await hook() }
        if path == "/credential", let delay = options.delayAtCredential {
            // Like a server that stalls: the request's own timeout decides.
            if delay > request.timeout { throw .timedOut }
        }
        switch (request.method, path) {
        case (.get, "/.well-known/openid-credential-issuer"): return jsonResponse(200, issuerMetadata())
        case (.get, "/.well-known/oauth-authorization-server"): return jsonResponse(200, serverMetadata())
        case (.get, "/.well-known/jwt-vc-issuer"):
            let key = try! JWK(publicKey: .ec(pki.leafKey.publicKey)).adding(["kid": "issuer-key"])
            return jsonResponse(200, ["issuer": .string(base), "jwks": ["keys": [key.jsonValue]]])
        case (.post, "/par"): return pushAuthorization(request)
        case (.post, "/token"): return await token(request)
        case (.post, "/nonce"):
            let nonce = next("c-nonce")
            locked { _ = nonces.insert(nonce) }
            return jsonResponse(200, ["c_nonce": .string(nonce)], headers: options.dpop ? ["DPoP-Nonce": dpopNonce] : [:])
        case (.post, "/credential"): return await credential(request)
        case (.post, "/deferred"): return await deferred(request)
        case (.post, "/notification"):
            guard authorized(request) != nil else { return oauthError(401, "invalid_token") }
            locked { notifications.append(json(HTTPResponse(status: 200, body: request.body ?? []))) }
            return HTTPResponse(status: 204)
        default:
            return HTTPResponse(status: 404)
        }
    }

    func issuerMetadata() -> JSONObject {
        var configuration: JSONObject = ["format": .string(options.format.rawValue), "scope": "identity",
                                         "cryptographic_binding_methods_supported": ["jwk"]]
        var jwtProof: JSONObject = ["proof_signing_alg_values_supported": ["ES256"]]
        if options.keyAttestationAnchor != nil {
            jwtProof["key_attestations_required"] = ["key_storage": ["iso_18045_basic"]]
        }
        configuration["proof_types_supported"] = ["jwt": .object(jwtProof)]
        if options.format == .msoMdoc {
            configuration["doctype"] = .string(Self.docType)
        } else {
            configuration["vct"] = .string(Self.vct)
        }
        configuration["credential_metadata"] = ["display": [["name": "Identity", "locale": "en"]],
                                                "claims": [["path": ["given_name"], "display": [["name": "Given name"]]]]]
        var metadata: JSONObject = [
            "credential_issuer": .string(base),
            "credential_endpoint": .string(base + "/credential"),
            "deferred_credential_endpoint": .string(base + "/deferred"),
            "display": [["name": "Test Issuer", "locale": "en"]],
            "credential_configurations_supported": .object([configurationId: .object(configuration)]),
        ]
        if options.nonceEndpoint { metadata["nonce_endpoint"] = .string(base + "/nonce") }
        if let servers = options.authorizationServers { metadata["authorization_servers"] = .array(servers.map(JSONValue.string)) }
        if options.notificationEndpoint { metadata["notification_endpoint"] = .string(base + "/notification") }
        if let batch = options.batchSize { metadata["batch_credential_issuance"] = ["batch_size": .integer(Int64(batch))] }
        if let request = options.requestEncryption, request.publishKeys {
            let key = try! JWK(publicKey: .ec(request.key.publicKey)).adding(["kid": .string(request.kid), "alg": "ECDH-ES", "use": "enc"])
            metadata["credential_request_encryption"] = ["jwks": [key.jsonValue], "enc_values_supported": .array(request.enc.map(JSONValue.string)),
                                                         "encryption_required": .bool(request.required)]
        }
        if let response = options.responseEncryption {
            metadata["credential_response_encryption"] = ["alg_values_supported": ["ECDH-ES"],
                                                          "enc_values_supported": .array(response.enc.map(JSONValue.string)),
                                                          "encryption_required": .bool(response.required)]
        }
        return metadata
    }

    func serverMetadata() -> JSONObject {
        var metadata: JSONObject = [
            "issuer": .string(base), "authorization_endpoint": .string(base + "/authorize"),
            "token_endpoint": .string(base + "/token"),
            "code_challenge_methods_supported": .array(options.codeChallengeMethods.map(JSONValue.string)),
            "authorization_response_iss_parameter_supported": .bool(options.issParameter),
            "require_pushed_authorization_requests": .bool(options.requirePAR),
        ]
        if options.par { metadata["pushed_authorization_request_endpoint"] = .string(base + "/par") }
        if options.dpop { metadata["dpop_signing_alg_values_supported"] = ["ES256"] }
        return metadata
    }

    private func form(_ request: HTTPRequest) -> [String: String] {
        let pairs = formPairs(request.body)
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }

    private func pushAuthorization(_ request: HTTPRequest) -> HTTPResponse {
        let pairs = formPairs(request.body)
        let uri = "urn:ietf:params:oauth:request_uri:" + next("par")
        locked { pushed[uri] = pairs }
        return jsonResponse(201, ["request_uri": .string(uri), "expires_in": 60])
    }

    /// Checks a DPoP proof; returns its key thumbprint, or the error response.
    private func checkDPoP(_ request: HTTPRequest, accessToken: String?, challenge: inout Int, limit: Int,
                           status: Int) -> Outcome<String> {
        guard let proof = request.headers["DPoP"], let jwt = try? JWT(compact: proof),
              let key = try? jwt.jws.verifyWithEmbeddedJWK(), jwt.header.type == "dpop+jwt",
              jwt.claims["htm"]?.stringValue == request.method.rawValue,
              jwt.claims["htu"]?.stringValue == base + request.url.path,
              accessToken.map({ jwt.claims["ath"]?.stringValue == DPoPProof.accessTokenHash($0) }) ?? true else {
            return .reply(oauthError(status, "invalid_dpop_proof"))
        }
        if challenge < limit || jwt.claims["nonce"]?.stringValue != dpopNonce {
            challenge += 1
            dpopNonce = "dpop-nonce-\(challenge)"
            var headers: HTTPHeaders = ["DPoP-Nonce": dpopNonce]
            if status == 401 { headers["WWW-Authenticate"] = "DPoP error=\"use_dpop_nonce\"" }
            return .reply(oauthError(status, "use_dpop_nonce", headers: headers))
        }
        return .ok(key.thumbprint)
    }

    private func token(_ request: HTTPRequest) async -> HTTPResponse {
        let parameters = form(request)
        var jkt: String?
        if options.dpop {
            var challenge = tokenChallenges
            let result = checkDPoP(request, accessToken: nil, challenge: &challenge, limit: options.tokenNonceChallenges, status: 400)
            tokenChallenges = challenge
            switch result {
            case .reply(let response): return response
            case .ok(let thumbprint): jkt = thumbprint
            }
        }
        switch parameters["grant_type"] {
        case CredentialOffer.preAuthorizedGrantType:
            guard let code = parameters["pre-authorized_code"], let entry = locked({ codes[code] }), !entry.used else {
                return oauthError(400, "invalid_grant")
            }
            if let expected = entry.txCode, parameters["tx_code"] != expected { return oauthError(400, "invalid_grant") }
            locked { codes[code] = (entry.txCode, true) }
        case "authorization_code":
            guard let code = parameters["code"], let authorization = locked({ authorizationCodes.removeValue(forKey: code) }),
                  let verifier = parameters["code_verifier"],
                  authorization.first(where: { $0.0 == "code_challenge" })?.1 == PKCE(verifier: verifier).challenge,
                  authorization.first(where: { $0.0 == "redirect_uri" })?.1 == parameters["redirect_uri"] else {
                return oauthError(400, "invalid_grant")
            }
        case "refresh_token":
            guard let refresh = parameters["refresh_token"], let bound = locked({ refreshTokens[refresh] }),
                  bound == jkt else { return oauthError(400, "invalid_grant") }
        default:
            return oauthError(400, "unsupported_grant_type")
        }
        let access = next("access")
        locked { tokens[access] = jkt }
        var body: JSONObject = ["access_token": .string(access), "token_type": .string(jkt == nil ? "Bearer" : "DPoP"),
                                "expires_in": 3600]
        if options.refreshTokens {
            let refresh = next("refresh")
            locked { refreshTokens[refresh] = jkt }
            body["refresh_token"] = .string(refresh)
        }
        if let identifiers = options.credentialIdentifiers {
            body["authorization_details"] = [["type": "openid_credential", "credential_configuration_id": .string(configurationId),
                                              "credential_identifiers": .array(identifiers.map(JSONValue.string))]]
        }
        return jsonResponse(200, body)
    }

    /// The access token of a resource request, when it is valid and its binding checks.
    private func authorized(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, let binding = locked({ tokens[parts[1]] }) else { return nil }
        if let jkt = binding {
            guard parts[0] == "DPoP", let proof = request.headers["DPoP"], let jwt = try? JWT(compact: proof),
                  let key = try? jwt.jws.verifyWithEmbeddedJWK(), key.thumbprint == jkt,
                  jwt.claims["ath"]?.stringValue == DPoPProof.accessTokenHash(parts[1]) else { return nil }
        } else {
            guard parts[0] == "Bearer" else { return nil }
        }
        return parts[1]
    }

    private func requestBody(_ request: HTTPRequest) -> Outcome<JSONObject> {
        let body = request.body ?? []
        if request.headers["Content-Type"] == "application/jwt" {
            guard let setup = options.requestEncryption, let jwe = try? JWE(compact: String(decoding: body, as: UTF8.self)),
                  jwe.header.keyID == setup.kid, let plain = try? jwe.decrypt(with: setup.key),
                  let object = try? JSONValue.parseObject(plain) else {
                return .reply(oauthError(400, "invalid_encryption_parameters"))
            }
            return .ok(object)
        }
        if options.requestEncryption?.required == true { return .reply(oauthError(400, "invalid_encryption_parameters")) }
        guard let object = try? JSONValue.parseObject(body) else { return .reply(oauthError(400, "invalid_credential_request")) }
        return .ok(object)
    }

    private func credential(_ request: HTTPRequest) async -> HTTPResponse {
        if options.dpop, request.headers["DPoP"] != nil {
            var challenge = credentialChallenges
            let token = request.headers["Authorization"]?.split(separator: " ").last.map(String.init)
            let result = checkDPoP(request, accessToken: token, challenge: &challenge,
                                   limit: options.credentialNonceChallenges, status: 401)
            credentialChallenges = challenge
            if case .reply(let response) = result { return response }
        }
        guard authorized(request) != nil else { return oauthError(401, "invalid_token") }
        let body: JSONObject
        switch requestBody(request) {
        case .reply(let response): return response
        case .ok(let object): body = object
        }
        locked { credentialRequests.append(body) }
        if let identifier = body["credential_identifier"]?.stringValue {
            guard options.credentialIdentifiers?.contains(identifier) == true else { return oauthError(400, "unknown_credential_identifier") }
        } else if body["credential_configuration_id"]?.stringValue != configurationId {
            return oauthError(400, "unknown_credential_configuration")
        }
        guard let proofs = body["proofs"]?["jwt"]?.arrayValue, !proofs.isEmpty,
              proofs.count <= (options.batchSize ?? 1) else { return oauthError(400, "invalid_proof") }
        var keys: [PublicKey] = []
        for proof in proofs {
            guard let compact = proof.stringValue, let jwt = try? JWT(compact: compact), jwt.header.type == "openid4vci-proof+jwt",
                  let jwk = try? jwt.jws.verifyWithEmbeddedJWK(), jwt.claims.audience == [base],
                  !options.nonceEndpoint || jwt.claims.nonce.map({ nonce in locked { nonces.contains(nonce) } }) == true,
                  let key = try? jwk.publicKey() else {
                return oauthError(400, "invalid_proof")
            }
            let nonce = jwt.claims.nonce
            if let anchor = options.keyAttestationAnchor {
                guard let attestation = jwt.header["key_attestation"]?.stringValue,
                      let verified = try? KeyAttestationVerifier(trustAnchors: [anchor]).verify(attestation, expectedNonce: nonce, at: clock.now),
                      verified.attestedKeys.contains(jwk) else { return oauthError(400, "invalid_proof") }
            }
            keys.append(key)
        }
        let encryption = responseEncryption(body)
        if case .reply(let response) = encryption { return response }
        let responseKey = encryption.value ?? nil
        switch options.deferral {
        case .accepted, .legacy:
            let transaction = next("tx")
            locked { transactions[transaction] = (keys, 0) }
            return respond(202, ["transaction_id": .string(transaction), "interval": 5], encryptTo: responseKey)
        case .none:
            return await issue(for: keys, encryptTo: responseKey)
        }
    }

    private func responseEncryption(_ body: JSONObject) -> Outcome<(JWK, ContentEncryptionAlgorithm)?> {
        guard let requested = body["credential_response_encryption"]?.objectValue else {
            if options.responseEncryption?.required == true { return .reply(oauthError(400, "invalid_encryption_parameters")) }
            return .ok(nil)
        }
        guard let jwkObject = requested["jwk"]?.objectValue, let jwk = try? JWK(members: jwkObject),
              let enc = requested["enc"]?.stringValue.flatMap(ContentEncryptionAlgorithm.init(rawValue:)) else {
            return .reply(oauthError(400, "invalid_encryption_parameters"))
        }
        if options.responseEncryption?.answerInPlaintext == true { return .ok(nil) }
        return .ok((jwk, options.responseEncryption?.answerWithEnc ?? enc))
    }

    private func respond(_ status: Int, _ object: JSONObject, encryptTo key: (JWK, ContentEncryptionAlgorithm)?) -> HTTPResponse {
        guard let (jwk, enc) = key else { return jsonResponse(status, object) }
        let jwe = try! JWE.encrypt(JSONValue.object(object).serializedBytes, to: jwk, contentEncryption: enc)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/jwt"], body: Array(jwe.compactSerialization.utf8))
    }

    private func issue(for keys: [PublicKey], encryptTo key: (JWK, ContentEncryptionAlgorithm)?) async -> HTTPResponse {
        var credentials: [JSONValue] = []
        for proofKey in keys {
            let holder = options.bindTo ?? proofKey
            credentials.append(["credential": .string(await mint(for: holder))])
        }
        return respond(200, ["credentials": .array(credentials), "notification_id": .string(next("notification"))], encryptTo: key)
    }

    func mint(for holder: PublicKey) async -> String {
        let now = clock.now
        switch options.format {
        case .sdJwtVc:
            let signer = SoftwareSigner(options.rogueSigner ?? pki.leafKey)
            let issuer = SDJWTIssuer(signer: signer, keyID: options.x5c ? nil : "issuer-key",
                                     certificateChain: options.x5c ? [pki.leaf] : nil)
            let claims: JSONObject = ["iss": .string(base), "vct": .string(options.issuedType ?? Self.vct), "iat": .integer(Int64(now.timeIntervalSince1970)),
                                      "exp": .integer(Int64(now.timeIntervalSince1970) + 86_400 * 30),
                                      "given_name": "Erika", "family_name": "Mustermann"]
            let plan = DisclosurePlan.object(["given_name": .disclosable, "family_name": .disclosable])
            return try! await issuer.issue(claims: claims, plan: plan, holderKey: JWK(publicKey: holder)).serialization
        case .msoMdoc:
            let signed = try! await MdocIssuer(signer: pki.signer, certificateChain: [pki.leaf]).issue(
                docType: options.issuedType ?? Self.docType, nameSpaces: [NameSpaced("org.iso.18013.5.1", [DataElement("family_name", "Mustermann"), DataElement("age_over_18", true)])],
                deviceKey: COSEKey(publicKey: holder),
                validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86_400 * 30)))
            guard options.unprotectedMdocAlgorithm else { return Base64URL.encode(signed.encodedBytes) }
            // The same MSO and chain, signed again with `alg` only where nothing covers it.
            let unprotected = COSEHeaderMap([(.algorithm, CBOR(COSEAlgorithm.es256.rawValue)), (.x5chain, .byteString(pki.leaf.derEncoded))])
            let issuerAuth = try! await COSESign1.sign(payload: signed.issuerAuth.payload ?? [], unprotected: unprotected, tagged: false,
                                                       signer: pki.signer)
            return Base64URL.encode(try! IssuerSigned(nameSpaces: signed.nameSpaces, issuerAuth: issuerAuth).encodedBytes)
        }
    }

    private func deferred(_ request: HTTPRequest) async -> HTTPResponse {
        guard authorized(request) != nil else { return oauthError(401, "invalid_token") }
        let body: JSONObject
        switch requestBody(request) {
        case .reply(let response): return response
        case .ok(let object): body = object
        }
        guard let id = body["transaction_id"]?.stringValue, let entry = locked({ transactions[id] }) else {
            return oauthError(400, "invalid_transaction_id")
        }
        let encryption = responseEncryption(body)
        if case .reply(let response) = encryption { return response }
        let responseKey = encryption.value ?? nil
        if entry.polls == 0 {
            locked { transactions[id] = (entry.proofKeys, 1) }
            if options.deferral == .legacy { return jsonResponse(400, ["error": "issuance_pending", "interval": 5]) }
            return respond(202, ["transaction_id": .string(id), "interval": 5], encryptTo: responseKey)
        }
        locked { _ = transactions.removeValue(forKey: id) }
        return await issue(for: entry.proofKeys, encryptTo: responseKey)
    }

    /// The requests sent to `path`.
    func requests(to path: String) -> [HTTPRequest] { locked { log.filter { $0.url.path == path } } }
}

/// A wallet over in-memory storage that talks to `issuer`.
struct TestWalletSetup {
    let storage: IssuanceStorage
    let client: Openid4VciClient

    init(issuer: any HTTPClient, encryption: CredentialEncryption = .whenRequired, config: IssuanceConfig = IssuanceConfig(),
         clock: any WalletClock = SystemClock()) throws {
        storage = try IssuanceStorage.inMemory()
        client = Openid4VciClient(http: issuer, rng: SystemRandom(), clock: clock, credentialEncryption: encryption,
                                  config: config, storage: storage)
    }

    /// Every key in the secure area.
    func keyAliases() async throws -> [String] { try await storage.secureArea.listKeys().map(\.alias) }

    /// Every stored credential.
    func credentials() async throws -> [StoredCredential] { try await storage.store.list() }
}

/// Follows `session` to its terminal state, answering pauses with `answer`; a generous
/// hang guard turns a stuck session into a failure rather than a hung test run.
func terminalState(of session: IssuanceSession, answering answer: @escaping @Sendable (IssuanceState) -> Void = { _ in })
    async throws -> IssuanceState {
    try await withThrowingTaskGroup(of: IssuanceState?.self) { group in
        group.addTask {
            for await state in session.states {
                answer(state)
                if state.isTerminal { return state }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(120))
            return nil
        }
        guard let first = try await group.next(), let state = first else {
            group.cancelAll()
            throw HangGuard.sessionHung
        }
        group.cancelAll()
        return state
    }
}

enum HangGuard: Error { case sessionHung }

/// A value, or the response that refuses the request.
enum Outcome<Value> {
    case ok(Value)
    case reply(HTTPResponse)

    var value: Value? { if case .ok(let value) = self { value } else { nil } }
}
