import Foundation
import JOSE
import WalletCrypto
import WalletEncoding

/// What the holder puts in a Key Binding JWT (RFC 9901 §4.3): the verifier's audience
/// and nonce, the time, and the OpenID4VP transaction data being authorised.
public struct KeyBindingParameters: Sendable, Equatable {
    /// `aud`: the verifier (its client identifier).
    public var audience: String
    /// `nonce`: the verifier's fresh nonce.
    public var nonce: String
    /// `iat`: when the KB-JWT is made (from the caller's `WalletClock`).
    public var issuedAt: Date
    /// The `transaction_data` strings of the request (base64url, as received); each is
    /// hashed into `transaction_data_hashes` (OpenID4VP 1.0 §8.4, App. B.3.3).
    public var transactionData: [String]
    /// The hash for `transaction_data_hashes`, written as `transaction_data_hashes_alg`.
    public var transactionDataHashAlgorithm: SDJWTHashAlgorithm

    /// Parameters for a KB-JWT to `audience` with `nonce` at `issuedAt`.
    public init(audience: String, nonce: String, issuedAt: Date, transactionData: [String] = [],
                transactionDataHashAlgorithm: SDJWTHashAlgorithm = .sha256) {
        self.audience = audience
        self.nonce = nonce
        self.issuedAt = issuedAt
        self.transactionData = transactionData
        self.transactionDataHashAlgorithm = transactionDataHashAlgorithm
    }
}

/// What a verifier requires of the Key Binding JWT (RFC 9901 §7.3).
public struct KeyBindingExpectation: Sendable, Equatable {
    /// The `aud` the KB-JWT must name.
    public var audience: String
    /// The `nonce` the KB-JWT must carry.
    public var nonce: String
    /// How old `iat` may be, in seconds (the clock skew is added on both sides).
    public var maximumAge: TimeInterval
    /// The `transaction_data` strings of the request; the KB-JWT must carry one hash for
    /// each, and none when this is empty (OpenID4VP 1.0 §8.4).
    public var transactionData: [String]

    /// An expectation of `audience` and `nonce`, with a KB-JWT at most `maximumAge` seconds old.
    public init(audience: String, nonce: String, maximumAge: TimeInterval = 300, transactionData: [String] = []) {
        self.audience = audience
        self.nonce = nonce
        self.maximumAge = maximumAge
        self.transactionData = transactionData
    }
}

/// The `typ` of a Key Binding JWT (RFC 9901 §4.3).
let keyBindingType = "kb+jwt"

extension KeyBindingParameters {
    /// The KB-JWT claims for a presentation whose `sd_hash` is `sdHash`.
    func claims(sdHash: String) throws(SDJWTError) -> JWTClaims {
        var members: JSONObject = [
            "iat": .integer(issuedAt.wholeSecondsSince1970),
            "aud": .string(audience),
            "nonce": .string(nonce),
            "sd_hash": .string(sdHash),
        ]
        if !transactionData.isEmpty {
            // OpenID4VP 1.0 §8.4: a hash of each transaction_data string, in request order.
            members["transaction_data_hashes"] = .array(transactionData.map {
                .string(transactionDataHashAlgorithm.base64URLDigest(of: $0))
            })
            members["transaction_data_hashes_alg"] = .string(transactionDataHashAlgorithm.rawValue)
        }
        do {
            return try JWTClaims(members)
        } catch {
            throw .signingFailed(error)
        }
    }
}

extension KeyBindingExpectation {
    /// Checks a KB-JWT (signature by `holderKey`, `typ`, `iat`, `aud`, `nonce`, `sd_hash`,
    /// transaction data) for the presentation `sdJWT`.
    func check(_ keyBinding: JWT, of sdJWT: SDJWT, holderKey: JWK, now: Date, clockSkew: TimeInterval) throws(SDJWTError) {
        try Self.checkBinding(keyBinding, of: sdJWT, holderKey: holderKey)
        let claims = keyBinding.claims
        do {
            try JWTTimeRules(clockSkew: clockSkew, required: [.issuedAt], maximumAge: maximumAge).check(claims, at: now)
        } catch {
            throw .keyBinding(.invalidTime(error))
        }
        // RFC 9901 §4.3: aud is "a single string"; an array naming several parties would let
        // one presentation be replayed to each of them.
        guard claims["aud"]?.stringValue == audience else {
            throw .keyBinding(.audienceMismatch(expected: audience, actual: claims.audience))
        }
        guard claims.nonce == nonce else { throw .keyBinding(.nonceMismatch(expected: nonce, actual: claims.nonce)) }
        try checkTransactionData(claims)
    }

    /// The checks that hold whatever the verifier expects: `typ`, the signature by the
    /// `cnf` key, and `sd_hash` over the presented SD-JWT.
    static func checkBinding(_ keyBinding: JWT, of sdJWT: SDJWT, holderKey: JWK) throws(SDJWTError) {
        guard keyBinding.header.type == keyBindingType || keyBinding.header.type == "application/" + keyBindingType else {
            throw .keyBinding(.invalidType(keyBinding.header.type))
        }
        do {
            try keyBinding.jws.verify(with: holderKey)
        } catch {
            throw .keyBinding(.invalidSignature(error))
        }
        let expected = sdJWT.sdHash
        let actual = keyBinding.claims["sd_hash"]?.stringValue
        guard actual == expected else { throw .keyBinding(.sdHashMismatch(expected: expected, actual: actual)) }
    }

    private func checkTransactionData(_ claims: JWTClaims) throws(SDJWTError) {
        let hashes = claims["transaction_data_hashes"]
        guard !transactionData.isEmpty else {
            guard hashes == nil else { throw .keyBinding(.transactionDataMismatch(.unexpectedHashes)) }
            return
        }
        guard let entries = hashes?.arrayValue else {
            throw .keyBinding(.transactionDataMismatch(.missingHashes))
        }
        var algorithm = SDJWTHashAlgorithm.sha256
        if let name = claims["transaction_data_hashes_alg"] {
            guard let text = name.stringValue else { throw .keyBinding(.transactionDataMismatch(.algorithmNotString)) }
            algorithm = try SDJWTHashAlgorithm(name: text)
        }
        let presented = entries.compactMap(\.stringValue)
        guard presented.count == entries.count else { throw .keyBinding(.transactionDataMismatch(.hashNotString)) }
        let expected = transactionData.map { algorithm.base64URLDigest(of: $0) }
        // As multisets: a request may carry one entry twice, and each needs its own hash.
        guard presented.sorted() == expected.sorted() else {
            throw .keyBinding(.transactionDataMismatch(.hashesDiffer))
        }
    }
}
