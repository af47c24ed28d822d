import WalletEncoding
/// A JWK Set (RFC 7517 §5). Keys of a type or curve this module does not
/// implement are skipped, as §5 recommends; a malformed key of a known type is an error.
public struct JWKSet: Sendable, Equatable {
    /// The usable keys, in document order.
    public let keys: [JWK]

    /// A set of the given keys.
    public init(keys: [JWK]) { self.keys = keys }

    /// Parses `{"keys": [...]}`.
    public init(json: [UInt8]) throws(JOSEError) {
        try self.init(value: .object(try JSONValue.parseObject(json, what: .jwkSet)))
    }

    /// Parses `{"keys": [...]}` from text.
    public init(json: String) throws(JOSEError) { try self.init(json: json.utf8Bytes) }

    /// Reads a JWK Set from an already parsed JSON value.
    public init(value: JSONValue) throws(JOSEError) {
        guard let entries = value["keys"]?.arrayValue else { throw .malformed(.notAJWKSet) }
        var keys: [JWK] = []
        for entry in entries {
            guard let members = entry.objectValue else { throw .malformed(.notAJWKSet) }
            do {
                keys.append(try JWK(members: members))
            } catch .unsupportedAlgorithm {
                continue
            }
        }
        self.keys = keys
    }

    /// The first key whose `kid` is `keyID`.
    public func key(withID keyID: String) -> JWK? { keys.first { $0.keyID == keyID } }

    /// The JSON text of the set.
    public var jsonString: String { JSONValue.object(["keys": .array(keys.map(\.jsonValue))]).serialized }
}
