import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding

/// What the verifier concluded about one transaction; tests read it to see what the
/// wallet sent and which check, if any, failed.
public struct PresentationVerdict: Sendable, Equatable {
    /// Where the transaction stands.
    public enum Outcome: Sendable, Equatable {
        /// No response yet.
        case pending
        /// A VP Token arrived and every check passed.
        case accepted
        /// A response arrived and a check failed.
        case rejected(VerificationFailure)
        /// The wallet sent an Authorization Error Response (`access_denied` when the user declined).
        case declined(error: String, description: String?)
    }

    /// The transaction.
    public let transactionId: String
    /// The outcome.
    public internal(set) var outcome: Outcome
    /// The verified presentations of an accepted response, in query order.
    public internal(set) var presentations: [VerifiedPresentation]
    /// How many times the request object was fetched (GET or POST to the request URI).
    public internal(set) var requestFetches: Int
    /// The `wallet_nonce` of the last `request_uri_method=post` fetch.
    public internal(set) var walletNonce: String?
    /// The `wallet_metadata` of the last `request_uri_method=post` fetch.
    public internal(set) var walletMetadata: JSONObject?
    /// How many responses (VP Token or error) reached the response endpoint or the DC API check.
    public internal(set) var responsesReceived: Int
    /// The `redirect_uri` the verifier answered the wallet with, if any.
    public internal(set) var redirectUri: URL?
    /// When the outcome was decided.
    public internal(set) var decidedAt: Date?

    init(transactionId: String) {
        self.transactionId = transactionId
        self.outcome = .pending
        self.presentations = []
        self.requestFetches = 0
        self.responsesReceived = 0
    }

    /// Whether a response decided the transaction.
    public var isDecided: Bool { outcome != .pending }

    /// The presentations of one credential query.
    public func presentations(for queryId: String) -> [VerifiedPresentation] {
        presentations.filter { $0.queryId == queryId }
    }

    /// The failure of a rejected response.
    public var failure: VerificationFailure? {
        if case .rejected(let failure) = outcome { return failure }
        return nil
    }
}

/// One presentation that passed every check.
public struct VerifiedPresentation: Sendable, Equatable {
    /// The credential query it answers.
    public let queryId: String
    /// Its format.
    public let format: VerifierQuery.Format
    /// `vct` or the mdoc docType.
    public let credentialType: String
    /// The claims it disclosed, with their values (mdoc values converted to JSON): for
    /// SD-JWT VC each selectively disclosed claim, for mdoc each issuer-signed element.
    public let disclosedClaims: [DisclosedClaim]
    /// The claims query ids of the `claim_sets` option it satisfied (nil without `claim_sets`).
    public let claimSet: [String]?
    /// Whether it proved holder binding (KB-JWT or device signature).
    public let holderBound: Bool
    /// The indices (into the request's `transaction_data`) of the entries it bound.
    public let transactionData: [Int]
    /// The issuer's certificate path (leaf first), when the issuer was trusted through anchors.
    public let issuerCertificateSubjects: [String]
    /// The holder key the presentation proved possession of: the SD-JWT VC's `cnf` key
    /// whose KB-JWT verified, or the MSO `deviceKey` whose device authentication verified;
    /// nil for an SD-JWT VC presented without a KB-JWT.
    public let holderKey: PublicKey?

    /// The value disclosed at `path`, if any.
    public func value(at path: ClaimPath) -> JSONValue? {
        disclosedClaims.first { $0.path == path }?.value
    }

    /// The disclosed paths.
    public var disclosedPaths: [ClaimPath] { disclosedClaims.map(\.path) }
}

/// A disclosed claim: its concrete path (keys and indices) and value.
public struct DisclosedClaim: Sendable, Equatable {
    /// The concrete path (for mdoc `[namespace, element]`).
    public let path: ClaimPath
    /// The value.
    public let value: JSONValue

    /// A disclosed claim.
    public init(path: ClaimPath, value: JSONValue) {
        self.path = path
        self.value = value
    }
}

/// Why the verifier refused a response. Each case names the check that failed.
public enum VerificationFailure: Error, Equatable, Sendable {
    /// The body or the decrypted payload is not a well-formed Authorization Response.
    case malformedResponse(ResponseProblem)
    /// `state` is not the one the request carried.
    case stateMismatch(expected: String?, actual: String?)
    /// The response mode is `direct_post.jwt` / `dc_api.jwt`, but the VP Token came in the clear.
    case responseNotEncrypted
    /// The JWE did not decrypt with the transaction's key, or is not the expected algorithm.
    case decryptionFailed(JOSEError)
    /// The JWE's `enc` is not one the request offered.
    case encryptionAlgorithmNotOffered(String)
    /// The transaction already has a decided outcome (a replayed or second response).
    case transactionClosed
    /// The VP Token has an entry for no credential query of the request.
    case unknownQuery(String)
    /// A credential query has zero presentations, or more than one without `multiple`.
    case presentationCount(queryId: String, count: Int)
    /// The presentations returned do not satisfy the required queries or credential sets.
    case queryNotSatisfied
    /// A presentation is not the expected JSON type or encoding (string, base64url ...).
    case malformedPresentation(queryId: String)
    /// The SD-JWT VC failed a check of the SDJWT module (issuer signature, disclosures,
    /// KB-JWT signature, `nonce`, `aud`, `sd_hash`, `iat` window ...).
    case sdJwt(queryId: String, SDJWTError)
    /// The mdoc DeviceResponse failed a check of the Mdoc module (issuer chain, digests,
    /// validity, device signature over the session transcript ...).
    case mdoc(queryId: String, MdocError)
    /// The DeviceResponse status is not OK, or it holds not exactly one document.
    case mdocResponseShape(queryId: String)
    /// The credential's type (`vct` or docType) is not one the query asked for.
    case credentialTypeNotRequested(queryId: String, type: String)
    /// Holder binding was required (or transaction data was bound) and the presentation has none.
    case missingKeyBinding(queryId: String)
    /// The KB-JWT `aud` is not exactly the expected audience as a single string.
    case audienceMismatch(queryId: String, expected: String)
    /// A requested claim was not disclosed.
    case missingClaim(queryId: String, path: ClaimPath)
    /// A disclosed claim's value is not one of the query's `values`.
    case claimValueNotAllowed(queryId: String, path: ClaimPath)
    /// No option of the query's `claim_sets` is fully disclosed.
    case noClaimSetSatisfied(queryId: String)
    /// A claim was disclosed that the query did not ask for.
    case extraClaimDisclosed(queryId: String, path: ClaimPath)
    /// Transaction data was not bound as requested.
    case transactionData(TransactionDataFailure)
}

/// What is wrong with the shape of an Authorization Response.
public enum ResponseProblem: Equatable, Sendable {
    /// The body is not `application/x-www-form-urlencoded` or does not decode.
    case notAForm
    /// A field appears more than once.
    case repeatedField(String)
    /// Neither `vp_token`, `response` nor `error` is present.
    case missingVPToken
    /// `vp_token` is not a JSON object of arrays.
    case vpTokenNotAnObject
    /// The decrypted payload is not a JSON object.
    case payloadNotAnObject
    /// `error` with an empty code.
    case emptyErrorCode
}

/// How transaction data binding failed.
public enum TransactionDataFailure: Equatable, Sendable {
    /// An entry was bound by no presentation.
    case notBound(index: Int)
    /// An entry was bound by more than one presentation.
    case boundMoreThanOnce(index: Int)
    /// A presentation carries a hash that matches no entry it may bind.
    case unexpectedHash(queryId: String)
    /// The hash algorithm is not one the entry allows.
    case hashAlgorithmNotAllowed(queryId: String, algorithm: String)
    /// An mdoc's device-signed element for an entry has the wrong value.
    case elementValueMismatch(queryId: String, index: Int)
}
