import Foundation
import SDJWT
import WalletStorage

/// Who asks for a presentation, as far as the wallet could establish it.
public struct VerifierIdentity: Sendable, Hashable {
    /// The full client identifier, prefix included (`x509_san_dns:verifier.example`,
    /// or `origin:<origin>` for an unsigned Digital Credentials API request).
    public let clientId: String
    /// How the client identifier was authenticated.
    public let clientIdScheme: ClientIdScheme
    /// The common name of the signing certificate's subject, when the request was signed.
    public let commonName: String?
    /// Whether reader trust held: the certificate chain validated to a configured reader
    /// anchor, the signature verified, and the client identifier is bound to the
    /// certificate. Always false without configured anchors and for unsigned requests.
    public let trusted: Bool

    /// A verifier identity.
    public init(clientId: String, clientIdScheme: ClientIdScheme, commonName: String? = nil, trusted: Bool = false) {
        self.clientId = clientId
        self.clientIdScheme = clientIdScheme
        self.commonName = commonName
        self.trusted = trusted
    }
}

/// One Credential Query of a request, with the stored credentials that answer it.
public struct QueryPresentation: Sendable, Hashable {
    /// The Credential Query's id.
    public let queryId: String
    /// Whether every response must answer it (it is in every option of a required
    /// credential set, or the request has no credential sets).
    public let required: Bool
    /// Whether several credentials may answer it (DCQL `multiple`).
    public let multiple: Bool
    /// The Credential Format Identifier asked for.
    public let format: String
    /// The stored credentials that answer it, with what each would disclose.
    public let candidates: [PresentationCandidate]
    /// Whether a presentation answering it proves possession of the holder key over the
    /// verifier's nonce and audience (an SD-JWT VC's KB-JWT; an mdoc's DeviceAuth, always).
    /// False when the verifier waived it (`require_cryptographic_holder_binding: false`,
    /// OpenID4VP 1.0 §6.1) and no transaction data is bound to the query: the SD-JWT VC
    /// then leaves without a KB-JWT, and whoever receives it can present it again
    /// elsewhere, which a consent screen may want to say.
    public let holderBinding: Bool
    /// The claims the verifier declares it will retain (DCQL `intent_to_retain: true`,
    /// §6.3, mdoc), in query order; a candidate discloses those of its `disclosedPaths`.
    public let retainedPaths: [ClaimPath]

    /// A query with its candidates.
    public init(queryId: String, required: Bool, multiple: Bool, format: String, candidates: [PresentationCandidate],
                holderBinding: Bool = true, retainedPaths: [ClaimPath] = []) {
        self.queryId = queryId
        self.required = required
        self.multiple = multiple
        self.format = format
        self.candidates = candidates
        self.holderBinding = holderBinding
        self.retainedPaths = retainedPaths
    }
}

/// A resolved request, ready for consent: who asks, what each query would disclose from
/// which credential, and whether the wallet can answer.
public struct PresentationRequest: Sendable, Equatable {
    /// Who asks.
    public let verifier: VerifierIdentity
    /// The Credential Queries in request order, each with its candidates.
    public let queries: [QueryPresentation]
    /// The credential sets in force: alternative combinations of query ids (one required
    /// set per query when the request has none).
    public let credentialSets: [CredentialSetQuery]
    /// Whether every required credential set can be answered from the store.
    public let satisfiable: Bool
    /// The transactions the user authorises by presenting, or nil when there are none.
    public let transactionData: [TransactionData]?
    /// The caller's origin, for a Digital Credentials API request.
    public let origin: String?

    /// The request as the protocol needs it to answer (nonce, response URI, keys ...).
    package let resolved: ResolvedRequest
    /// The match the candidates come from.
    package let match: DcqlMatch

    package init(resolved: ResolvedRequest, match: DcqlMatch) {
        self.resolved = resolved
        self.match = match
        self.verifier = resolved.verifier
        self.queries = resolved.dcqlQuery.credentials.map { query in
            // The resolved query already requires binding where transaction data is bound.
            QueryPresentation(queryId: query.id, required: match.isRequired(query.id), multiple: query.multiple,
                              format: query.format, candidates: match.candidates[query.id] ?? [],
                              holderBinding: query.format == DcqlFormat.msoMdoc || query.requireCryptographicHolderBinding,
                              retainedPaths: (query.claims ?? []).filter { $0.intentToRetain == true }.map(\.path))
        }
        self.credentialSets = match.effectiveCredentialSets
        self.satisfiable = match.satisfiable
        self.transactionData = resolved.transactionData.isEmpty ? nil : resolved.transactionData
        self.origin = resolved.origin
    }

    /// The query with this id.
    public func query(_ queryId: String) -> QueryPresentation? { queries.first { $0.queryId == queryId } }
}

/// What the user agreed to present: for each query id, the credentials chosen.
public struct PresentationSelection: Sendable, Hashable {
    /// The chosen credentials by query id; a query absent (or with no ids) is not answered.
    public let chosen: [String: [CredentialId]]

    /// A selection of the given credentials.
    public init(chosen: [String: [CredentialId]]) {
        self.chosen = chosen
    }

    /// The obvious answer once the user approved it: for each required credential set,
    /// its first option the wallet can answer, with every candidate of a `multiple`
    /// query and the first candidate of any other. Optional credential sets are not
    /// answered: they need the user's explicit choice.
    public static func auto(_ request: PresentationRequest) -> PresentationSelection {
        PresentationSelection(chosen: request.match.automaticSelection)
    }
}

/// Where a presentation session is (the spec's `PresentationState`).
public enum PresentationState: Sendable, Equatable {
    /// The request is being fetched, verified and matched against the store.
    case resolvingRequest
    /// The request is resolved: show it, then call `respond` or `decline`.
    case requestResolved(PresentationRequest)
    /// The response is being built and sent.
    case submitting
    /// The verifier accepted the response. `redirectUri` is where to send the user
    /// agent next, if the verifier said; `dcApiResponse` is the response data object (JSON)
    /// to hand back to the Digital Credentials API, for such requests.
    case completed(redirectUri: URL?, dcApiResponse: String?)
    /// The user declined; the verifier was told `access_denied` (remote requests) and may
    /// have given a `redirectUri` to follow.
    case declined(redirectUri: URL?)
    /// The session failed.
    case failed(PresentationError)

    /// Whether the session has ended (`completed`, `declined` or `failed`).
    public var isTerminal: Bool {
        switch self {
        case .completed, .declined, .failed: true
        case .resolvingRequest, .requestResolved, .submitting: false
        }
    }
}
