import Foundation
import MdocProximity
import OpenID4VCI
import OpenID4VP
import ReferenceParties
import Testing
import WalletCrypto
import WalletEncoding
import WalletKit
import WalletRuntime
import WalletStorage

/// Sends each request to the handler of its host: the reference issuer and verifier
/// in-process, under their https origins.
struct HostRouter: HTTPClient {
    let handlers: [String: any HTTPHandler]

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let host = request.url.host, let handler = handlers[host] else { throw .transport(.cannotFindHost) }
        return try await InProcessHTTPClient(handler: handler).send(request)
    }
}

/// The reference issuer and verifier in-process, and a wallet that trusts them.
struct Parties {
    static let verifierOrigin = "https://verifier.example"
    static let pidType = "urn:eudi:pid:1"
    static let mDLType = "org.iso.18013.5.1.mDL"
    static let nameSpace = IssuerCredentialConfiguration.mDLNameSpace

    let issuer: ReferenceIssuer
    let verifier: ReferenceVerifier
    let http: HostRouter

    static func make(issuer configuration: ReferenceIssuerConfiguration = ReferenceIssuerConfiguration(dpop: DPoPPolicy(mode: .required, requireNonce: true))) throws -> Parties {
        let issuer = try ReferenceIssuer(configuration: configuration)
        let anchors = issuer.trustAnchors
        let verifier = try ReferenceVerifier(configuration: VerifierConfiguration(
            baseURL: URL(string: verifierOrigin)!, sdJwtIssuerTrust: .anchors([anchors.issuerRoot]),
            mdocIssuerAnchors: [anchors.iaca]))
        return Parties(issuer: issuer, verifier: verifier,
                       http: HostRouter(handlers: ["issuer.example": issuer, "verifier.example": verifier]))
    }

    /// A wallet configuration trusting both parties, over the in-process router.
    func config(storage: WalletConfig.Storage = .inMemory, readerAnchors: Bool = true, claimValues: Bool = false,
                proximity: ProximityConfig = ProximityConfig(), extraReaderAnchorsDer: [[UInt8]] = []) -> WalletConfig {
        WalletConfig(storage: storage,
                     trust: TrustConfig(issuerAnchors: [issuer.trustAnchors.iaca, issuer.trustAnchors.issuerRoot],
                                        readerAnchorsDer: (readerAnchors ? verifier.pki.anchorsDER : []) + extraReaderAnchorsDer),
                     proximity: proximity,
                     transactionLog: TransactionLogOptions(recordsClaimValues: claimValues),
                     httpClient: http)
    }

    /// Issues a PID (pre-authorized, tx code) into `wallet`; its id.
    func issuePid(into wallet: Wallet, policy: CredentialPolicy = CredentialPolicy()) async throws -> CredentialId {
        let offer = try await issuer.createOffer(.preAuthorized([IssuerCredentialConfiguration.pidId], txCode: .init(value: "493536")))
        let resolved = try await wallet.issuance.resolveOffer(offer.byValue)
        let session = wallet.issuance.start(.fromOffer(resolved, configurationId: IssuerCredentialConfiguration.pidId,
                                                       txCode: "493536", policy: policy))
        let terminal = await terminalState(of: session)
        guard case .completed(let result) = terminal, let id = result.issued.first else {
            throw TestFailure("PID issuance ended \(terminal)")
        }
        return id
    }

    /// Issues an mDL (authorization code, the browser step answered by following the redirect).
    func issueMdl(into wallet: Wallet, policy: CredentialPolicy = CredentialPolicy(batchSize: 3, use: .oneTime)) async throws -> CredentialId {
        let session = wallet.issuance.start(.fromIssuer(await issuer.credentialIssuer, configurationId: IssuerCredentialConfiguration.mDLId,
                                                        policy: policy))
        for await state in session.states {
            if case .authorizationRequired(let url) = state {
                let response = try await http.send(HTTPRequest(method: .get, url: URL(string: url)!))
                session.completeAuthorization(response.headers["Location"] ?? "")
            }
            if state.isTerminal { break }
        }
        guard case .completed(let result) = session.currentState, let id = result.issued.first else {
            throw TestFailure("mDL issuance ended \(session.currentState)")
        }
        return id
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func terminalState(of session: WalletIssuanceSession) async -> IssuanceState {
    for await state in session.states where state.isTerminal { return state }
    return session.currentState
}

func terminalState(of session: WalletPresentationSession,
                   answer: (PresentationRequest) -> PresentationSelection? = { .auto($0) }) async -> PresentationState {
    for await state in session.states {
        if case .requestResolved(let request) = state {
            if let selection = answer(request) { session.respond(selection) } else { session.decline() }
        }
        if state.isTerminal { return state }
    }
    return session.currentState
}

/// A fresh folder under the temporary directory.
func temporaryFolder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("walletkit-\(UUID().uuidString)", isDirectory: true)
}
