import CBOR
import SDJWT
import WalletCrypto
import WalletEncoding

/// One `transaction_data` entry (OpenID4VP 1.0 §5.1, §8.4): a typed object the wallet must
/// bind to exactly one of the credentials it names. The verifier sends it as base64url of
/// its JSON and remembers that exact string, since the wallet hashes the string as received.
public struct VerifierTransactionData: Sendable, Equatable {
    /// `type`.
    public var type: String
    /// `credential_ids`: the credential queries that may authorize it.
    public var credentialIds: [String]
    /// `transaction_data_hashes_alg` (SD-JWT VC profile, App. B.3.3); nil means `sha-256`.
    public var hashAlgorithms: [String]?
    /// The type-specific members (amount, payee, document hashes ...).
    public var details: JSONObject

    /// An entry of `type` for `credentialIds`.
    public init(type: String, credentialIds: [String], hashAlgorithms: [String]? = nil, details: JSONObject = [:]) {
        self.type = type
        self.credentialIds = credentialIds
        self.hashAlgorithms = hashAlgorithms
        self.details = details
    }

    /// The JSON object: the details, then `type`, `credential_ids` and `transaction_data_hashes_alg`.
    public var jsonValue: JSONValue {
        var members = details
        members["type"] = .string(type)
        members["credential_ids"] = .array(credentialIds.map(JSONValue.string))
        if let hashAlgorithms { members["transaction_data_hashes_alg"] = .array(hashAlgorithms.map(JSONValue.string)) }
        return .object(members)
    }

    /// The request parameter string: base64url of the JSON.
    public var encoded: String { Base64URL.encode(jsonValue.serializedBytes) }

    /// The hash algorithms the wallet may use (`sha-256` when none is named).
    var allowedHashAlgorithms: [String] { hashAlgorithms ?? ["sha-256"] }

    func validate(against query: VerifierQuery) throws(VerifierError) {
        guard !type.isEmpty else { throw .invalidTransactionData(.emptyType) }
        guard !credentialIds.isEmpty else { throw .invalidTransactionData(.noCredentialIds) }
        for id in credentialIds {
            guard let credential = query.credential(id) else { throw .invalidTransactionData(.unknownCredentialId(id)) }
            // App. B.3.3: transaction data needs holder binding.
            if credential.format == .sdJwtVc, !credential.requireCryptographicHolderBinding {
                throw .invalidTransactionData(.unboundCredential(id))
            }
        }
        for name in allowedHashAlgorithms where (try? SDJWTHashAlgorithm(name: name)) == nil {
            throw .invalidTransactionData(.unsupportedHashAlgorithm(name))
        }
    }
}

/// How a wallet returns an mdoc-bound transaction data entry: the device-signed data
/// element (namespace, identifier, value) the verifier expects for it. OpenID4VP 1.0
/// App. B.2.2 leaves the element to each transaction data type, so the rule is the
/// verifier's configuration; the wallet's `mdocTransactionDataBinder` must agree with it.
public struct MdocTransactionDataBinding: Sendable {
    /// The element expected for an entry (given with its exact request string), or nil
    /// when this type cannot be bound to an mdoc.
    public let expectedElement: @Sendable (_ entry: VerifierTransactionData, _ encoded: String)
        -> (nameSpace: String, identifier: String, value: CBOR)?

    /// A custom rule.
    public init(expectedElement: @escaping @Sendable (_ entry: VerifierTransactionData, _ encoded: String)
                    -> (nameSpace: String, identifier: String, value: CBOR)?) {
        self.expectedElement = expectedElement
    }

    /// The default namespace of ``digest(nameSpace:)``.
    public static let defaultNameSpace = "org.openid4vp.transaction_data"

    /// The reference rule: an element in `nameSpace` named after the entry's `type`, whose
    /// value is the SHA-256 digest (a byte string) of the entry's request string as
    /// received, mirroring the SD-JWT `transaction_data_hashes`.
    public static func digest(nameSpace: String = defaultNameSpace) -> MdocTransactionDataBinding {
        MdocTransactionDataBinding { entry, encoded in
            (nameSpace, entry.type, .byteString(HashAlgorithm.sha256.digest(Array(encoded.utf8))))
        }
    }
}

extension VerifierTransactionData {
    /// Reads a transaction data object: `type`, `credential_ids`, optional
    /// `transaction_data_hashes_alg`, and the type's own members.
    public init(json: JSONValue) throws(VerifierError) {
        guard let object = json.objectValue else { throw .invalidTransactionData(.emptyType) }
        guard let type = object["type"]?.stringValue else { throw .invalidTransactionData(.emptyType) }
        guard let ids = object["credential_ids"]?.stringArrayValue else { throw .invalidTransactionData(.noCredentialIds) }
        let algorithms = object["transaction_data_hashes_alg"]
        if let algorithms, algorithms.stringArrayValue == nil {
            throw .invalidTransactionData(.unsupportedHashAlgorithm(algorithms.serialized))
        }
        self.init(type: type, credentialIds: ids, hashAlgorithms: algorithms?.stringArrayValue,
                  details: object.filter { !["type", "credential_ids", "transaction_data_hashes_alg"].contains($0.key) })
    }
}
