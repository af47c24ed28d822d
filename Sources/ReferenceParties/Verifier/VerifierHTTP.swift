import Foundation
import JOSE
import WalletEncoding
import WalletRuntime

/// The verifier's answers, on top of the HTTP layer's helpers: nothing it answers is cached.
enum VerifierHTTP {
    /// A JSON answer.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        .json(value, status: status, headers: ["Cache-Control": "no-store"])
    }

    /// An OAuth error (RFC 6749 §5.2).
    static func error(_ code: String, _ description: String, status: Int = 400) -> HTTPResponse {
        .oauthError(code, description: description, status: status)
    }

    /// The fields of a strict `application/x-www-form-urlencoded` body, or nil when the
    /// body is not such a form or repeats a field (RFC 6749 §3.1).
    static func formFields(_ request: HTTPRequest) -> [String: String]? {
        guard let parameters = try? request.formParameters(), parameters.duplicatedNames.isEmpty else { return nil }
        var fields: [String: String] = [:]
        for (name, value) in parameters { fields[name] = value }
        return fields
    }
}

extension VerificationFailure {
    /// A short sentence for the `error_description` the wallet receives (the verdict keeps the detail).
    public var summary: String {
        switch self {
        case .malformedResponse: "the response is not a well-formed Authorization Response"
        case .stateMismatch: "state does not match the request"
        case .responseNotEncrypted: "the response mode requires an encrypted response"
        case .decryptionFailed: "the response does not decrypt"
        case .encryptionAlgorithmNotOffered: "the response uses an encryption algorithm the request did not offer"
        case .transactionClosed: "the transaction already has a response"
        case .unknownQuery: "vp_token answers a query that was not asked"
        case .presentationCount: "vp_token has the wrong number of presentations for a query"
        case .queryNotSatisfied: "the presentations do not satisfy the query"
        case .malformedPresentation: "a presentation is malformed"
        case .sdJwt: "an SD-JWT VC presentation failed verification"
        case .mdoc: "an mdoc presentation failed verification"
        case .mdocResponseShape: "a DeviceResponse must hold one document with status OK"
        case .credentialTypeNotRequested: "a credential of a type that was not requested"
        case .missingKeyBinding: "holder binding is required"
        case .audienceMismatch: "the key binding audience is not this verifier"
        case .missingClaim: "a requested claim was not disclosed"
        case .claimValueNotAllowed: "a disclosed value is not one the query accepts"
        case .noClaimSetSatisfied: "no claim set of the query is satisfied"
        case .extraClaimDisclosed: "a claim was disclosed that was not requested"
        case .transactionData: "transaction data is not bound as requested"
        }
    }
}

extension PresentationVerdict {
    /// The verdict as JSON (for `GET transactions/<id>` and `wallet serve verifier --json`).
    public var jsonValue: JSONValue {
        var object: JSONObject = ["transaction_id": .string(transactionId)]
        switch outcome {
        case .pending: object["outcome"] = "pending"
        case .accepted: object["outcome"] = "accepted"
        case .rejected(let failure):
            object["outcome"] = "rejected"
            object["failure"] = .string(failure.summary)
        case .declined(let error, let description):
            object["outcome"] = "declined"
            object["error"] = .string(error)
            if let description { object["error_description"] = .string(description) }
        }
        object["request_fetches"] = .integer(Int64(requestFetches))
        object["responses_received"] = .integer(Int64(responsesReceived))
        if let walletNonce { object["wallet_nonce"] = .string(walletNonce) }
        if let redirectUri { object["redirect_uri"] = .string(redirectUri.absoluteString) }
        object["presentations"] = .array(presentations.map { presentation in
            var members: JSONObject = [
                "query_id": .string(presentation.queryId),
                "format": .string(presentation.format.rawValue),
                "type": .string(presentation.credentialType),
                "holder_bound": .bool(presentation.holderBound),
                "claims": .array(presentation.disclosedClaims.map { ["path": $0.path.jsonValue, "value": $0.value] }),
            ]
            if let set = presentation.claimSet { members["claim_set"] = .array(set.map(JSONValue.string)) }
            if let key = presentation.holderKey { members["holder_key"] = JWK(publicKey: key).jsonValue }
            if !presentation.transactionData.isEmpty {
                members["transaction_data"] = .array(presentation.transactionData.map { .integer(Int64($0)) })
            }
            return .object(members)
        })
        return .object(object)
    }
}
