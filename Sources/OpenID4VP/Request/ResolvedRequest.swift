import Foundation
import JOSE
import WalletEncoding
import SDJWT
import WalletRuntime

/// How the response travels back (OpenID4VP 1.0 §8.2, §8.3.1, App. A).
package enum ResponseMode: String, Sendable, Hashable {
    /// A form POST to `response_uri`.
    case directPost = "direct_post"
    /// A form POST of an encrypted JWT to `response_uri`.
    case directPostJwt = "direct_post.jwt"
    /// Through the Digital Credentials API.
    case dcApi = "dc_api"
    /// Through the Digital Credentials API, encrypted.
    case dcApiJwt = "dc_api.jwt"

    /// Whether the response is a JWE.
    var isEncrypted: Bool { self == .directPostJwt || self == .dcApiJwt }
    /// Whether the response goes through the DC API.
    var isDcApi: Bool { self == .dcApi || self == .dcApiJwt }
}

/// Where a request came from, and what the wallet established about its sender before
/// reading its parameters.
package enum RequestContext: Sendable, Hashable {
    /// A URL or QR invocation; `clientId` was authenticated as `verifier` says.
    case remote(clientId: ClientIdentifier, verifier: VerifierIdentity)
    /// A Digital Credentials API call from `origin`.
    case dcApi(origin: String, clientId: ClientIdentifier, verifier: VerifierIdentity)
}

/// A request whose parameters passed every check: what the session answers.
package struct ResolvedRequest: Sendable, Equatable {
    /// The verifier's client identifier.
    let clientId: ClientIdentifier
    /// Who asks.
    let verifier: VerifierIdentity
    /// How the response travels.
    let responseMode: ResponseMode
    /// Where a remote response goes, as the request wrote it (the mdoc handover binds the text).
    let responseUri: String?
    /// The verifier's nonce.
    let nonce: String
    /// The verifier's `state`, echoed in the response.
    let state: String?
    /// The DCQL query, with holder binding required of every query transaction data refers to.
    let dcqlQuery: DcqlQuery
    /// The verifier metadata.
    let clientMetadata: ClientMetadata
    /// The key and `enc` for an encrypted response.
    let encryption: ResponseEncryption?
    /// The transaction data entries.
    let transactionData: [TransactionData]
    /// The caller's origin for a DC API request.
    let origin: String?

    /// The audience of holder-binding proofs: the client identifier, or for the DC API
    /// `origin:<origin>` (OpenID4VP 1.0 App. A.4, B.3.6).
    var audience: String { origin.map { "origin:" + $0 } ?? clientId.full }

    /// The response URI as a URL (checked when the request was read).
    var responseURL: URL? { responseUri.flatMap(URL.init(string:)) }

    /// Checks the Authorization Request parameters (§5) of a request whose sender is
    /// described by `context`; JSON-carrying parameters are already parsed.
    init(parameters: JSONObject, context: RequestContext, allowHTTP: Bool) throws(InvalidRequestReason) {
        func string(_ name: String) throws(InvalidRequestReason) -> String? {
            guard let value = parameters[name], !value.isNull else { return nil }
            guard let text = value.stringValue else { throw .invalidParameter(name) }
            return text
        }
        guard let responseType = try string("response_type") else { throw .missingParameter("response_type") }
        guard responseType == "vp_token" else { throw .unsupportedResponseType(responseType) }
        guard let nonce = try string("nonce"), !nonce.isEmpty, Self.isURLSafe(nonce) else { throw .invalidNonce }
        let state = try string("state")
        if let state, !Self.isURLSafe(state) { throw .invalidState }

        // §5.1: exactly one of dcql_query and scope; this wallet defines no scope aliases.
        let hasScope = try string("scope") != nil
        guard let dcqlValue = parameters["dcql_query"], !dcqlValue.isNull else {
            throw hasScope ? .scopeNotSupported : .missingParameter("dcql_query")
        }
        guard !hasScope else { throw .dcqlQueryAndScope }
        guard let dcqlMembers = dcqlValue.objectValue else { throw .invalidParameter("dcql_query") }
        var query: DcqlQuery
        do { query = try DcqlQuery(json: dcqlMembers) } catch { throw .invalidDcqlQuery(error) }

        var metadata = ClientMetadata.empty
        if let value = parameters["client_metadata"], !value.isNull {
            guard let members = value.objectValue else { throw .invalidParameter("client_metadata") }
            metadata = try ClientMetadata(json: members)
        }

        var transactionData: [TransactionData] = []
        if let value = parameters["transaction_data"], !value.isNull {
            guard let entries = value.stringArrayValue, !entries.isEmpty else { throw .invalidParameter("transaction_data") }
            for (index, entry) in entries.enumerated() {
                do { transactionData.append(try TransactionData(encoded: entry, index: index)) } catch {
                    throw .invalidTransactionData(error)
                }
            }
            query = try Self.requiringHolderBinding(query, for: transactionData)
        }

        let modeName = try string("response_mode")
        let clientId: ClientIdentifier, verifier: VerifierIdentity
        var responseUri: String?
        var origin: String?
        let mode: ResponseMode
        switch context {
        case .remote(let id, let identity):
            clientId = id
            verifier = identity
            guard let modeName else { throw .missingParameter("response_mode") }
            guard let remoteMode = ResponseMode(rawValue: modeName), !remoteMode.isDcApi else {
                throw .unsupportedResponseMode(modeName)
            }
            mode = remoteMode
            // §8.2: direct_post sends to response_uri; redirect_uri must not be there.
            guard try string("redirect_uri") == nil else { throw .redirectUriWithDirectPost }
            var uriText = try string("response_uri")
            if uriText == nil, id.scheme == .redirectUri { uriText = id.value }
            guard let uriText else { throw .missingResponseUri }
            guard let url = URL(string: uriText), url.host != nil,
                  url.scheme == "https" || (url.scheme == "http" && allowHTTP && Self.isLoopback(url)) else {
                throw Self.isHTTPURL(uriText) ? .insecureURL(parameter: "response_uri") : .invalidParameter("response_uri")
            }
            switch id.scheme {
            case .x509SanDns:
                // §5.9.3: without a list of trusted client identifiers, the response URI's
                // host must be the DNS name the certificate was checked for.
                guard url.host?.lowercased() == id.value.lowercased() else {
                    throw .responseUriHostMismatch(expected: id.value, actual: url.host)
                }
            case .redirectUri:
                guard uriText == id.value else { throw .responseUriNotClientId }
            case .x509Hash, .origin:
                break
            }
            responseUri = uriText
        case .dcApi(let callerOrigin, let id, let identity):
            clientId = id
            verifier = identity
            origin = callerOrigin
            // §5.9.3's host rule where the response goes back to the caller: a verifier
            // whose certificate no anchor vouches for is only its self-made certificate's
            // DNS name, which is honest only when the response reaches that name. (A
            // trusted verifier's expected_origins may list other origins it serves.)
            if id.scheme == .x509SanDns, !identity.trusted {
                let host = URL(string: callerOrigin)?.host
                guard host?.lowercased() == id.value.lowercased() else {
                    throw .originHostMismatch(expected: id.value, actual: host)
                }
            }
            guard let modeName else { throw .missingParameter("response_mode") }
            guard let dcMode = ResponseMode(rawValue: modeName), dcMode.isDcApi else { throw .unsupportedResponseMode(modeName) }
            mode = dcMode
        }

        var encryption: ResponseEncryption?
        if mode.isEncrypted {
            guard let choice = metadata.responseEncryption else { throw .noUsableEncryptionKey }
            encryption = choice
        }

        self.clientId = clientId
        self.verifier = verifier
        self.responseMode = mode
        self.responseUri = responseUri
        self.nonce = nonce
        self.state = state
        self.dcqlQuery = query
        self.clientMetadata = metadata
        self.encryption = encryption
        self.transactionData = transactionData
        self.origin = origin
    }

    /// Whether `text` is an absolute http(s) URL (to tell an insecure one from garbage).
    private static func isHTTPURL(_ text: String) -> Bool {
        guard let url = URL(string: text) else { return false }
        return url.scheme == "http" && url.host != nil
    }

    /// The query with holder binding required of every Credential Query a transaction
    /// refers to: a transaction is authorised by the holder's key, so it forces binding
    /// back on even where the verifier waived it. A reference to an unknown query is refused.
    static func requiringHolderBinding(_ query: DcqlQuery, for transactions: [TransactionData]) throws(InvalidRequestReason) -> DcqlQuery {
        var referenced = Set<String>()
        for transaction in transactions {
            for id in transaction.credentialIds {
                guard query.credential(id: id) != nil else { throw .invalidTransactionData(.unknownCredentialId(id)) }
                referenced.insert(id)
            }
            guard transaction.hashAlgorithm != nil else {
                throw .invalidTransactionData(.unsupportedHashAlgorithm(transaction.hashAlgorithms ?? []))
            }
        }
        // An SD-JWT presentation authorises every transaction bound to it under one
        // KB-JWT hash (App. B.3.3): those that may land on one query need one in common,
        // or the verifier would refuse the response only after the user consented.
        for credential in query.credentials where credential.format == DcqlFormat.sdJwtVc && referenced.contains(credential.id) {
            let sharing = transactions.filter { $0.credentialIds.contains(credential.id) }
            guard TransactionData.commonHashAlgorithm(sharing) != nil else {
                throw .invalidTransactionData(.unsupportedHashAlgorithm(sharing.flatMap { $0.hashAlgorithms ?? [SDJWTHashAlgorithm.sha256.rawValue] }))
            }
        }
        guard query.credentials.contains(where: { referenced.contains($0.id) && !$0.requireCryptographicHolderBinding }) else {
            return query
        }
        do {
            let credentials = try query.credentials.map { (credential) throws(DcqlError) -> CredentialQuery in
                guard referenced.contains(credential.id), !credential.requireCryptographicHolderBinding else { return credential }
                return try CredentialQuery(id: credential.id, format: credential.format, multiple: credential.multiple,
                                           meta: credential.meta, trustedAuthorities: credential.trustedAuthorities,
                                           requireCryptographicHolderBinding: true, claims: credential.claims,
                                           claimSets: credential.claimSets)
            }
            return try DcqlQuery(credentials: credentials, credentialSets: query.credentialSets)
        } catch {
            throw .invalidDcqlQuery(error)
        }
    }

    /// §5.2: `nonce` and `state` use only ASCII URL-safe characters.
    static func isURLSafe(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                true
            default:
                false
            }
        }
    }

    /// Whether the URL's host is a loopback address or `localhost`: the runtime's one test
    /// (a dotted-quad literal in 127.0.0.0/8, not any name that starts with `127.`).
    static func isLoopback(_ url: URL) -> Bool {
        LoopbackHost.contains(url)
    }
}
