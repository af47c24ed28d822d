import CBOR
import COSE
import Foundation
import JOSE
import Mdoc
import ReferenceParties
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// A verifier with known issuers, and a minimal holder built from the SDJWT and Mdoc modules
/// (not from the wallet's OpenID4VP client) that fetches requests and posts responses.
struct VerifierFixture {
    static let baseURL = URL(string: "http://localhost:8080")!
    static let pidType = "urn:example:pid:1"
    static let mDL = "org.iso.18013.5.1.mDL"
    static let mDLNameSpace = "org.iso.18013.5.1"
    static let txNameSpace = MdocTransactionDataBinding.defaultNameSpace

    struct Failure: Error, CustomStringConvertible { let description: String }

    let clock: ManualClock
    let verifier: ReferenceVerifier
    let sdJwtIssuerKey: ECPrivateKey
    let holderKey: ECPrivateKey
    let mdocIssuerRoot: X509Certificate
    let mdocIssuerLeaf: X509Certificate
    let mdocIssuerKey: ECPrivateKey
    let deviceKey: ECPrivateKey

    static func make(answersWithRedirect: Bool = true, trustSdJwtIssuer: Bool = true,
                     trustMdocIssuer: Bool = true) async throws -> VerifierFixture {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_750_000_000))
        let now = clock.now
        let sdJwtIssuerKey = try ECPrivateKey.generate(curve: .p256)
        let otherKey = try ECPrivateKey.generate(curve: .p256)
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Test IACA"), (.country, "UT")]),
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400), pathLength: 0)
            .selfSigned(with: .ec(rootKey))
        let leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "Test DS"), (.country, "UT")]),
            subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER, notBefore: now.addingTimeInterval(-86_400),
            notAfter: now.addingTimeInterval(365 * 86_400), extendedKeyUsage: [ExtendedKeyUsageOID.mdocDocumentSigner])
            .signed(by: root, key: .ec(rootKey))
        let otherRoot = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Other IACA")]),
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(365 * 86_400), pathLength: 0)
            .selfSigned(with: .ec(otherKey))
        let configuration = VerifierConfiguration(
            baseURL: baseURL,
            sdJwtIssuerTrust: .keys([JWK(publicKey: trustSdJwtIssuer ? sdJwtIssuerKey.publicKey : otherKey.publicKey)]),
            mdocIssuerAnchors: [trustMdocIssuer ? root : otherRoot], answersWithRedirect: answersWithRedirect)
        return VerifierFixture(
            clock: clock, verifier: try ReferenceVerifier(configuration: configuration, clock: clock),
            sdJwtIssuerKey: sdJwtIssuerKey, holderKey: try ECPrivateKey.generate(curve: .p256),
            mdocIssuerRoot: root, mdocIssuerLeaf: leaf, mdocIssuerKey: leafKey,
            deviceKey: try ECPrivateKey.generate(curve: .p256))
    }

    // MARK: Credentials

    static let pidClaims: JSONObject = [
        "vct": .string(pidType), "iss": "https://issuer.example",
        "given_name": "Erika", "family_name": "Mustermann", "birthdate": "1964-08-12", "age_over_18": true,
        "address": ["street_address": "Heidestrasse 17", "locality": "Koeln", "country": "DE"],
        "nationalities": ["DE", "FR"],
    ]

    /// A PID SD-JWT VC bound to `holderKey` (or unbound), every personal claim disclosable.
    func issuePID(bound: Bool = true, vct: String = pidType) async throws -> SDJWT {
        var claims = Self.pidClaims
        claims["vct"] = .string(vct)
        claims["iat"] = .integer(Int64(clock.now.timeIntervalSince1970) - 3600)
        claims["exp"] = .integer(Int64(clock.now.timeIntervalSince1970) + 86_400)
        let plan = try DisclosurePlan(selectivelyDisclosable: [
            ["given_name"], ["family_name"], ["birthdate"], ["age_over_18"], ["address", "street_address"],
            ["address", "locality"], ["address", "country"], ["nationalities", nil],
        ])
        return try await SDJWTIssuer(signer: SoftwareSigner(sdJwtIssuerKey)).issue(
            claims: claims, plan: plan, holderKey: bound ? JWK(publicKey: holderKey.publicKey) : nil)
    }

    /// A presentation of `sdJWT` disclosing `paths`, with a KB-JWT unless `keyBinding` is nil.
    func present(_ sdJWT: SDJWT, disclosing paths: [ClaimPath], keyBinding: KeyBindingParameters?) async throws -> String {
        guard let keyBinding else { return try sdJWT.presentation(disclosing: paths).serialization }
        return try await sdJWT.presentation(disclosing: paths, keyBinding: keyBinding, signer: SoftwareSigner(holderKey))
            .serialization
    }

    /// KB-JWT parameters for a remote transaction (aud = client_id).
    func binding(_ transaction: VerifierTransaction, transactionData: [String] = []) -> KeyBindingParameters {
        KeyBindingParameters(audience: transaction.clientId, nonce: transaction.nonce, issuedAt: clock.now,
                             transactionData: transactionData)
    }

    /// An mDL authorizing the device key to sign transaction data elements.
    func issueMDL(docType: String = mDL) async throws -> IssuerSigned {
        let now = clock.now
        return try await MdocIssuer(signer: SoftwareSigner(mdocIssuerKey), certificateChain: [mdocIssuerLeaf]).issue(
            docType: docType,
            nameSpaces: [NameSpaced(Self.mDLNameSpace, [DataElement("family_name", "Mustermann"), DataElement("given_name", "Erika"),
                                                        DataElement("age_over_18", true), DataElement("document_number", "D0123456")])],
            deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
            validity: ValidityInfo(signed: now.addingTimeInterval(-3600), validFrom: now.addingTimeInterval(-3600),
                                   validUntil: now.addingTimeInterval(86_400)),
            keyAuthorizations: KeyAuthorizations(nameSpaces: [Self.txNameSpace]))
    }

    /// A base64url DeviceResponse releasing `elements` of `issuerSigned` over `transcript`.
    func presentMdoc(_ issuerSigned: IssuerSigned, elements: [String], transcript: SessionTranscript,
                     deviceSigned: DeviceNameSpaces = .empty) async throws -> String {
        var builder = DeviceResponseBuilder(sessionTranscript: transcript)
        let docType = issuerSigned.mobileSecurityObject.docType
        try await builder.addDocument(
            issuerSigned, for: ItemsRequest(docType: docType, nameSpaces: [NameSpaced(Self.mDLNameSpace, elements.map { RequestedElement($0, false) })]),
            deviceNameSpaces: deviceSigned, authentication: .signature(SoftwareSigner(deviceKey)))
        return Base64URL.encode(builder.build().encodedBytes)
    }

    /// The OpenID4VP redirect transcript of a remote transaction.
    static func transcript(_ transaction: VerifierTransaction, nonce: String? = nil, responseUri: String? = nil)
        -> SessionTranscript {
        .openID4VP(.openID4VP(clientId: transaction.clientId, nonce: nonce ?? transaction.nonce,
                              jwkThumbprint: transaction.encryptionKey?.thumbprintBytes,
                              responseUri: responseUri ?? transaction.responseURI.absoluteString))
    }

    // MARK: HTTP as a wallet would do it

    /// The link's query members.
    static func linkParameters(_ transaction: VerifierTransaction) throws -> [String: String] {
        guard let query = transaction.authorizationRequestURI.split(separator: "?", maxSplits: 1).last else {
            throw Failure(description: "link without a query")
        }
        return Dictionary(try FormURLEncoding.decode(String(query)).fields.map { ($0.name, $0.value) },
                          uniquingKeysWith: { first, _ in first })
    }

    /// Fetches the request object (GET, or POST with `walletNonce`) and parses it (no checks).
    func fetchRequestObject(_ transaction: VerifierTransaction, walletNonce: String? = nil,
                            walletMetadata: String? = nil) async throws -> JWT {
        guard let uri = transaction.requestURI else { throw Failure(description: "no request_uri") }
        var request = HTTPRequest(url: uri, headers: ["Accept": "application/oauth-authz-req+jwt"])
        if walletNonce != nil || walletMetadata != nil {
            var fields: [(String, String)] = []
            if let walletMetadata { fields.append(("wallet_metadata", walletMetadata)) }
            if let walletNonce { fields.append(("wallet_nonce", walletNonce)) }
            request.method = .post
            request.headers["Content-Type"] = "application/x-www-form-urlencoded"
            request.body = Array(FormURLEncoding.encode(fields).utf8)
        }
        let response = await verifier.respond(to: request)
        guard response.status == 200 else { throw Failure(description: "request_uri answered \(response.status)") }
        #expect(response.headers["Content-Type"] == "application/oauth-authz-req+jwt")
        return try JWT(compact: String(decoding: response.body, as: UTF8.self))
    }

    /// Posts form fields to the transaction's response URI.
    func post(_ fields: [(String, String)], to transaction: VerifierTransaction) async -> HTTPResponse {
        await verifier.respond(to: HTTPRequest(
            method: .post, url: transaction.responseURI, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(FormURLEncoding.encode(fields).utf8)))
    }

    /// Posts a `direct_post` response carrying `vpToken`, with the transaction's state.
    func postVPToken(_ vpToken: JSONValue, to transaction: VerifierTransaction, state: String?? = .none)
        async -> HTTPResponse {
        var fields = [("vp_token", vpToken.serialized)]
        if let state = state ?? transaction.state { fields.append(("state", state)) }
        return await post(fields, to: transaction)
    }

    /// Posts a `direct_post.jwt` response: `payload` encrypted to the transaction's key.
    func postEncrypted(_ payload: JSONObject, to transaction: VerifierTransaction,
                       encryption: ContentEncryptionAlgorithm = .a128gcm) async throws -> HTTPResponse {
        guard let key = transaction.encryptionKey else { throw Failure(description: "no encryption key") }
        let jwe = try JWE.encrypt(JSONValue.object(payload).serializedBytes, to: key, contentEncryption: encryption)
        return await post([("response", jwe.compactSerialization)], to: transaction)
    }

    /// The verdict, which must exist.
    func verdict(_ id: String) async throws -> PresentationVerdict {
        guard let verdict = await verifier.verdict(for: id) else { throw Failure(description: "no verdict for \(id)") }
        return verdict
    }

    /// The member of a JSON response body.
    static func body(_ response: HTTPResponse) -> JSONObject {
        (try? JSONValue.parseObject(response.body)) ?? [:]
    }
}

extension VerifierQuery {
    /// The PID query: given and family name.
    static let pidNames = VerifierQuery(credentials: [
        .sdJwt(id: "pid", vct: [VerifierFixture.pidType], claims: [.init(path: ["given_name"]), .init(path: ["family_name"])]),
    ])

    /// The mDL query: family name and age_over_18.
    static let mdlAge = VerifierQuery(credentials: [
        .mdoc(id: "mdl", docType: VerifierFixture.mDL,
              claims: [.init(path: [.key(VerifierFixture.mDLNameSpace), .key("family_name")]),
                       .init(path: [.key(VerifierFixture.mDLNameSpace), .key("age_over_18")])]),
    ])
}
