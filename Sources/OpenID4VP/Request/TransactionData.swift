import CBOR
import SDJWT
import WalletCrypto
import WalletEncoding

/// One `transaction_data` entry of a request (OpenID4VP 1.0 §5.1, §8.4): details of a
/// transaction (a payment, a signature) the user authorises with the presentation.
public struct TransactionData: Sendable, Hashable {
    /// The entry as received (base64url of a JSON object); what SD-JWT KB-JWTs hash.
    public let encoded: String
    /// The decoded object.
    public let members: JSONObject
    /// `type`: what kind of transaction this is.
    public let type: String
    /// `credential_ids`: the Credential Queries whose presentation may authorise it
    /// (exactly one of them does).
    public let credentialIds: [String]
    /// `transaction_data_hashes_alg` (App. B.3.3), when the verifier restricts the hash.
    public let hashAlgorithms: [String]?

    /// Decodes one entry; `index` is its position, for the error.
    public init(encoded: String, index: Int = 0) throws(InvalidTransactionDataReason) {
        guard let bytes = Base64URL.decode(encoded), let members = try? JSONValue.parseObject(bytes) else {
            throw .notBase64URLJSON(index: index)
        }
        let parts: (type: String, ids: [String], algorithms: [String]?)
        do {
            parts = (try members.string("type"), try members.stringArray("credential_ids"),
                     try members.optionalStringArray("transaction_data_hashes_alg"))
        } catch {
            throw .malformed(index: index)
        }
        guard !parts.ids.isEmpty, parts.algorithms?.isEmpty != true else { throw .malformed(index: index) }
        self.encoded = encoded
        self.members = members
        self.type = parts.type
        self.credentialIds = parts.ids
        self.hashAlgorithms = parts.algorithms
    }

    /// The hashes this entry accepts for `transaction_data_hashes` that the SDK has, in the
    /// verifier's order: sha-256 unless the entry names others (App. B.3.3).
    var acceptedHashAlgorithms: [SDJWTHashAlgorithm] {
        guard let hashAlgorithms else { return [.sha256] }
        return hashAlgorithms.compactMap { SDJWTHashAlgorithm(rawValue: $0) }
    }

    /// The hash for `transaction_data_hashes`: the first the entry accepts (App. B.3.3).
    var hashAlgorithm: SDJWTHashAlgorithm? { acceptedHashAlgorithms.first }

    /// The one hash a KB-JWT authorising all of `transactions` can use: its
    /// `transaction_data_hashes_alg` is a single value, which each entry must accept
    /// (App. B.3.3). The first entry's order decides; nil when they have none in common.
    static func commonHashAlgorithm(_ transactions: [TransactionData]) -> SDJWTHashAlgorithm? {
        guard let first = transactions.first else { return .sha256 }
        let others = transactions.dropFirst().map { Set($0.acceptedHashAlgorithms) }
        return first.acceptedHashAlgorithms.first { algorithm in others.allSatisfy { $0.contains(algorithm) } }
    }
}

/// The device-signed data element an mdoc presentation carries to authorise a
/// transaction (OpenID4VP 1.0 App. B.2.1): the namespace, identifier and value its
/// transaction data type defines.
public struct MdocTransactionDataElement: Sendable, Hashable {
    /// The namespace.
    public let nameSpace: String
    /// The data element identifier.
    public let elementIdentifier: String
    /// The value.
    public let value: CBOR

    /// An element to put in DeviceSigned.
    public init(nameSpace: String, elementIdentifier: String, value: CBOR) {
        self.nameSpace = nameSpace
        self.elementIdentifier = elementIdentifier
        self.value = value
    }

    /// The namespace ``digest(of:nameSpace:)`` uses unless told otherwise.
    public static let digestNameSpace = "org.openid4vp.transaction_data"

    /// The element of the digest convention for `transaction`: in `nameSpace`, named after
    /// the entry's `type`, whose value is the SHA-256 digest (a byte string) of the entry's
    /// request string exactly as received, as SD-JWT's `transaction_data_hashes` hashes it.
    /// The hash is SHA-256 whatever `transaction_data_hashes_alg` lists: that member names
    /// the hashes of SD-JWT key binding (App. B.3.3), and the convention fixes its own.
    ///
    /// OpenID4VP 1.0 (App. B.2.2) leaves the element to each transaction data type, so this
    /// is a convention, not the standard's rule: it is what this SDK's reference verifier
    /// expects by default (`MdocTransactionDataBinding.digest()` in ReferenceParties). Use it
    /// as the binder only for verifiers that agree:
    /// `PresentationConfig(mdocTransactionDataBinder: { .digest(of: $0) })`.
    public static func digest(of transaction: TransactionData, nameSpace: String = digestNameSpace) -> MdocTransactionDataElement {
        MdocTransactionDataElement(nameSpace: nameSpace, elementIdentifier: transaction.type,
                                   value: .byteString(HashAlgorithm.sha256.digest(Array(transaction.encoded.utf8))))
    }
}

/// Maps a transaction data entry to the device-signed element that authorises it in an
/// mdoc presentation, or nil for a type it does not handle. The mapping is specific to
/// the transaction data type, so the app supplies it.
public typealias MdocTransactionDataBinder = @Sendable (TransactionData) -> MdocTransactionDataElement?
