import CBOR
import COSE
import Foundation
import JOSE
import Mdoc
import OpenID4VP
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// A fixed instant the tests run at (certificates are valid around it).
let testNow = Date(timeIntervalSince1970: 1_780_000_000)

/// A wallet for tests: an in-memory secure area and store, and issuers that mint
/// SD-JWT VCs and mdocs into it with holder keys from the area.
struct TestWallet {
    let area: SoftwareSecureArea
    let store: CredentialStore
    let sdJwtIssuer: SDJWTIssuer
    let sdJwtIssuerKey: JWK
    let iaca: X509Certificate
    let mdocIssuer: MdocIssuer

    static let pidType = "https://credentials.example.com/identity_credential"
    static let mDL = "org.iso.18013.5.1.mDL"
    static let mDLNameSpace = "org.iso.18013.5.1"

    static func make(clock: any WalletClock = ManualClock(testNow)) async throws -> TestWallet {
        let wrapping = try EphemeralWrappingProvider()
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: wrapping, clock: clock)
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: wrapping, clock: clock)
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let iacaKey = try ECPrivateKey.generate(curve: .p256)
        let dsKey = try ECPrivateKey.generate(curve: .p256)
        let notBefore = testNow.addingTimeInterval(-86_400), notAfter = testNow.addingTimeInterval(365 * 86_400)
        let iaca = try CertificateBuilder.iaca(subject: try DistinguishedName([(.commonName, "Test IACA"), (.country, "UT")]),
                                               notBefore: notBefore, notAfter: notAfter).selfSigned(with: .ec(iacaKey))
        let ds = try CertificateBuilder.mdocDocumentSigner(
            subject: try DistinguishedName([(.commonName, "Test DS"), (.country, "UT")]),
            subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER, notBefore: notBefore, notAfter: notAfter
        ).signed(by: iaca, key: .ec(iacaKey))
        return TestWallet(area: area, store: store, sdJwtIssuer: SDJWTIssuer(signer: SoftwareSigner(issuerKey)),
                          sdJwtIssuerKey: JWK(publicKey: issuerKey.publicKey), iaca: iaca,
                          mdocIssuer: MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]))
    }

    static let pidClaims: JSONObject = [
        "given_name": "John", "family_name": "Doe", "last_name": "Doe", "first_name": "John", "birthdate": "1940-01-01",
        "address": ["street_address": "42 Market Street", "locality": "Milliways", "postal_code": "12345"],
        "nationalities": ["British", "Betelgeusian"],
    ]

    /// Mints an SD-JWT VC with every claim selectively disclosable and stores it with
    /// `instances` instances (each its own holder key).
    @discardableResult
    func addSdJwt(id: String, vct: String = pidType, claims: JSONObject = pidClaims, instances: Int = 1,
                  use: KeyUse = .rotate, bound: Bool = true) async throws -> StoredCredential {
        let keys = try await area.createKeys(count: instances, options: KeyCreationOptions())
        var members = claims
        members["vct"] = .string(vct)
        members["iss"] = "https://issuer.example"
        var plan = DisclosurePlan()
        for name in claims.keys {
            if case .object(let nested) = claims[name] {
                plan.members[name] = DisclosurePlan.object(Dictionary(uniqueKeysWithValues: nested.keys.map { ($0, DisclosurePlan.disclosable) }))
                    .disclosable
            } else {
                plan.members[name] = .disclosable
            }
        }
        var stored: [CredentialInstance] = []
        for (index, key) in keys.enumerated() {
            let sdJwt = try await sdJwtIssuer.issue(claims: members, plan: plan, holderKey: bound ? JWK(publicKey: key.publicKey) : nil)
            stored.append(CredentialInstance(index: index, keyAlias: key.alias, raw: Array(sdJwt.serialization.utf8)))
        }
        return try await store.save(StoredCredential(
            id: id, format: .sdJwtVc, type: vct, issuer: IssuerInfo(identifier: "https://issuer.example"), instances: stored,
            policy: CredentialPolicy(batchSize: instances, use: use)))
    }

    static let mDLElements: [DataElement] = [
        DataElement("family_name", "Doe"), DataElement("given_name", "John"), DataElement("age_over_18", true),
        DataElement("document_number", "123456789"), DataElement("resident_address", "42 Market Street"),
        DataElement("resident_country", "UT"),
    ]

    /// Mints an mDL and stores it.
    @discardableResult
    func addMdl(id: String, docType: String = mDL, instances: Int = 1, use: KeyUse = .rotate,
                keyAuthorizations: KeyAuthorizations? = nil) async throws -> StoredCredential {
        let keys = try await area.createKeys(count: instances, options: KeyCreationOptions())
        var stored: [CredentialInstance] = []
        for (index, key) in keys.enumerated() {
            let issued = try await mdocIssuer.issue(
                docType: docType, nameSpaces: [NameSpaced(Self.mDLNameSpace, Self.mDLElements)], deviceKey: COSEKey(publicKey: key.publicKey),
                validity: ValidityInfo(signed: testNow, validFrom: testNow.addingTimeInterval(-3600),
                                       validUntil: testNow.addingTimeInterval(30 * 86_400)),
                keyAuthorizations: keyAuthorizations)
            stored.append(CredentialInstance(index: index, keyAlias: key.alias, raw: issued.encodedBytes))
        }
        return try await store.save(StoredCredential(
            id: id, format: .msoMdoc, type: docType, issuer: IssuerInfo(identifier: "https://issuer.example"), instances: stored,
            policy: CredentialPolicy(batchSize: instances, use: use)))
    }
}

/// A verifier's signing identity for tests: a reader root and a leaf with a dNSName.
struct TestReader {
    let rootKey: ECPrivateKey
    let root: X509Certificate
    let leafKey: ECPrivateKey
    let leaf: X509Certificate
    let host: String

    static func make(host: String = "verifier.example", notBefore: Date = testNow.addingTimeInterval(-86_400),
                     notAfter: Date = testNow.addingTimeInterval(365 * 86_400), leafNotAfter: Date? = nil) throws -> TestReader {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Test Reader Root"), (.country, "UT")]),
            notBefore: notBefore, notAfter: notAfter).selfSigned(with: .ec(rootKey))
        let leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "Test Verifier"), (.country, "UT")]),
            subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER, notBefore: notBefore, notAfter: leafNotAfter ?? notAfter,
            subjectAlternativeNames: [.dnsName(host)]
        ).signed(by: root, key: .ec(rootKey))
        return TestReader(rootKey: rootKey, root: root, leafKey: leafKey, leaf: leaf, host: host)
    }

    var sanDnsClientId: String { "x509_san_dns:" + host }
    var hashClientId: String { "x509_hash:" + Base64URL.encode(leaf.sha256Fingerprint) }

    /// A signed request object with this reader's leaf in `x5c`.
    func sign(_ payload: JSONObject, type: String? = "oauth-authz-req+jwt", signer: (any Signer)? = nil,
              x5c: [X509Certificate]? = nil) async throws -> String {
        try await JWS.sign(payload: JSONValue.object(payload).serializedBytes, signer: signer ?? SoftwareSigner(leafKey),
                           type: type, x5c: x5c ?? [leaf]).compactSerialization
    }
}

/// An HTTP client that answers in-process from a handler and records every request.
final class RecordingHTTPClient: HTTPClient, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [HTTPRequest] = []
    private let handler: @Sendable (HTTPRequest) async -> HTTPResponse

    init(_ handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) { self.handler = handler }

    var requests: [HTTPRequest] {
        lock.lock(); defer { lock.unlock() }
        return recorded
    }

    private func record(_ request: HTTPRequest) {
        lock.lock(); defer { lock.unlock() }
        recorded.append(request)
    }

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        record(request)
        return await handler(request)
    }
}

extension HTTPResponse {
    static func json(_ object: JSONObject, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONValue.object(object).serializedBytes)
    }

    static func jwt(_ compact: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": "application/oauth-authz-req+jwt"], body: Array(compact.utf8))
    }
}

extension HTTPRequest {
    /// The form fields of the body.
    var form: [String: String] {
        guard let body, let fields = try? FormURLEncoding.decode(body) else { return [:] }
        return Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Waits for the session's terminal state (or the request, if it resolves first); a
/// generous hang guard reports a hang instead of blocking the run.
func waitFor(_ session: PresentationSession, resolved: Bool = false) async throws -> PresentationState {
    try await withThrowingTaskGroup(of: PresentationState.self) { group in
        group.addTask {
            for await state in session.states {
                if state.isTerminal { return state }
                if resolved, case .requestResolved = state { return state }
            }
            return session.currentState
        }
        group.addTask {
            try await Task.sleep(for: .seconds(120))
            throw VPTestSupport.Failure(description: "hang: the session did not reach the state in 120 s")
        }
        let state = try await group.next() ?? .resolvingRequest
        group.cancelAll()
        return state
    }
}

extension PresentationState {
    var request: PresentationRequest? {
        if case .requestResolved(let request) = self { return request }
        return nil
    }

    var failure: PresentationError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}
