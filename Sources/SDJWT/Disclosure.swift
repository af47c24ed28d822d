import JOSE
import WalletRuntime
import WalletEncoding

/// One disclosure (RFC 9901 §4.2): base64url of the JSON array `[salt, name, value]`
/// for an object property or `[salt, value]` for an array element.
///
/// `encoded` is kept exactly as received: the digest is computed over those ASCII
/// characters, never over a re-encoding (RFC 9901 §4.2.3).
public struct Disclosure: Sendable, Hashable {
    /// The base64url string as received or produced.
    public let encoded: String
    /// The salt.
    public let salt: String
    /// The claim name, or `nil` for an array element disclosure.
    public let claimName: String?
    /// The disclosed value (which may itself hold `_sd` digests: recursive disclosure).
    public let value: JSONValue

    /// Disclosures nest JSON at most this deep.
    static let maximumJSONDepth = 64

    /// Parses a disclosure string: canonical unpadded base64url of a UTF-8 JSON array of
    /// two or three elements whose salt (and claim name) are strings. `_sd` and `...`
    /// are refused as claim names.
    public init(encoded: String) throws(SDJWTError) {
        guard !encoded.isEmpty else { throw .disclosure(.malformed(.empty)) }
        guard let bytes = Base64URL.decodeStrict(encoded) else {
            throw .disclosure(.malformed(.notBase64URL))
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes, limits: JSONLimits(maxDepth: Self.maximumJSONDepth))
        } catch {
            throw .disclosure(.notJSON(error))
        }
        guard case .array(let elements) = json else { throw .disclosure(.malformed(.notArray)) }
        guard let salt = elements.first?.stringValue else { throw .disclosure(.malformed(.saltNotString)) }
        switch elements.count {
        case 2:
            self.claimName = nil
            self.value = elements[1]
        case 3:
            guard let name = elements[1].stringValue else { throw .disclosure(.malformed(.claimNameNotString)) }
            // RFC 9901 §4.2.1: the claim name must not be `_sd` or `...`.
            guard name != "_sd", name != "..." else { throw .disclosure(.reservedClaimName(name)) }
            self.claimName = name
            self.value = elements[2]
        default:
            throw .disclosure(.malformed(.wrongElementCount(elements.count)))
        }
        self.salt = salt
        self.encoded = encoded
    }

    /// Builds a disclosure, serializing `[salt, claimName, value]` (or `[salt, value]`)
    /// compactly.
    public init(salt: String, claimName: String?, value: JSONValue) throws(SDJWTError) {
        if let claimName, claimName == "_sd" || claimName == "..." { throw .disclosure(.reservedClaimName(claimName)) }
        let array: JSONValue = .array(claimName.map { [.string(salt), .string($0), value] } ?? [.string(salt), value])
        self.encoded = Base64URL.encode(array.serializedBytes)
        self.salt = salt
        self.claimName = claimName
        self.value = value
    }

    /// Encodes a given JSON array text as is (any whitespace or escaping the issuer chose),
    /// after checking that it is a valid disclosure.
    public init(jsonText: String) throws(SDJWTError) {
        try self.init(encoded: Base64URL.encode(jsonText.utf8Bytes))
    }

    /// Whether this discloses an array element (`[salt, value]`).
    public var isArrayElement: Bool { claimName == nil }

    /// base64url(hash(ASCII of `encoded`)) (RFC 9901 §4.2.3).
    public func digest(using algorithm: SDJWTHashAlgorithm = .sha256) -> String {
        algorithm.base64URLDigest(of: encoded)
    }
}
