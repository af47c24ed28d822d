import Foundation
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The protected header of a JWS or JWE: the base64url text as received (which is
/// what gets signed or authenticated), its decoded JSON bytes, and the parsed members.
public struct JOSEHeader: Sendable, Equatable {
    /// The base64url text exactly as received or produced.
    public let encoded: String
    /// The decoded JSON bytes of the header.
    public let rawBytes: [UInt8]
    /// All members of the header.
    public let members: JSONObject

    /// Header parameter names registered by RFC 7515, 7516, 7518 and 7797, which
    /// `crit` must not list (RFC 7515 §4.1.11).
    static let registeredNames: Set<String> = [
        "alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256", "typ", "cty", "crit",
        "enc", "zip", "epk", "apu", "apv", "iv", "tag", "p2s", "p2c",
    ]

    /// Decodes and parses an encoded protected header (duplicate members are rejected).
    public init(encoded: some StringProtocol) throws(JOSEError) {
        guard !encoded.isEmpty else { throw .malformed(.emptyProtectedHeader) }
        guard let bytes = Base64URL.decodeStrict(encoded) else {
            throw .malformed(.notBase64URL(.protectedHeader))
        }
        self.encoded = String(encoded)
        self.rawBytes = bytes
        self.members = try JSONValue.parseObject(bytes, what: .protectedHeader)
        try checkMemberTypes()
    }

    /// Builds a header from members (serialized with sorted member names).
    public init(members: JSONObject) throws(JOSEError) {
        self.members = members
        self.rawBytes = JSONValue.object(members).serializedBytes
        self.encoded = Base64URL.encode(rawBytes)
        try checkMemberTypes()
    }

    private func checkMemberTypes() throws(JOSEError) {
        for name in ["alg", "typ", "cty", "kid", "enc", "zip", "apu", "apv", "jku", "x5u"] {
            if let member = members[name], member.stringValue == nil { throw .malformed(.invalidHeader(name)) }
        }
        for name in ["jwk", "epk"] {
            if let member = members[name], member.objectValue == nil { throw .malformed(.invalidHeader(name)) }
        }
        if let x5c = members["x5c"] {
            guard let entries = x5c.arrayValue, !entries.isEmpty, entries.allSatisfy({ $0.stringValue != nil }) else {
                throw .malformed(.invalidHeader("x5c"))
            }
        }
        if let crit = members["crit"] {
            guard let entries = crit.arrayValue?.compactMap(\.stringValue), entries.count == crit.arrayValue?.count else {
                throw .invalidCriticalHeader(.notStringArray)
            }
            guard !entries.isEmpty else { throw .invalidCriticalHeader(.empty) }
            guard Set(entries).count == entries.count else { throw .invalidCriticalHeader(.repeated) }
            for name in entries {
                guard !Self.registeredNames.contains(name) else {
                    throw .invalidCriticalHeader(.registeredParameter(name))
                }
                guard members[name] != nil else { throw .invalidCriticalHeader(.absentParameter(name)) }
            }
        }
    }

    /// Member `name`.
    public subscript(name: String) -> JSONValue? { members[name] }

    /// `alg`.
    public var algorithm: String? { members["alg"]?.stringValue }
    /// `typ`.
    public var type: String? { members["typ"]?.stringValue }
    /// `cty`.
    public var contentType: String? { members["cty"]?.stringValue }
    /// `kid`.
    public var keyID: String? { members["kid"]?.stringValue }
    /// `enc` (JWE).
    public var encryption: String? { members["enc"]?.stringValue }
    /// `zip` (JWE).
    public var compression: String? { members["zip"]?.stringValue }
    /// `crit`, the extension parameters the producer marked critical.
    public var critical: [String] { members["crit"]?.arrayValue?.compactMap(\.stringValue) ?? [] }

    /// `jwk`, parsed strictly.
    public func jwk() throws(JOSEError) -> JWK? {
        guard let members = members["jwk"]?.objectValue else { return nil }
        let key = try JWK(members: members)
        guard !key.isPrivate else { throw .invalidKey(.unexpectedPrivateKey) }
        return key
    }

    /// `x5c` as DER certificates (standard base64, leaf first), each parsed.
    /// - Throws: `untrusted(.malformedCertificate(index:))` for an entry that is not base64
    ///   of one DER certificate.
    public func certificateChain() throws(JOSEError) -> [X509Certificate]? {
        guard let entries = members["x5c"]?.arrayValue else { return nil }
        var chain: [X509Certificate] = []
        for (index, entry) in entries.enumerated() {
            guard let text = entry.stringValue, let der = Base64.decodeStrict(text),
                  let certificate = try? X509Certificate(derEncoded: der) else {
                throw .untrusted(.malformedCertificate(index: index))
            }
            chain.append(certificate)
        }
        return chain
    }

    /// Throws `unknownCriticalHeader` when `crit` names a parameter outside `understood`.
    public func checkCritical(understood: Set<String>) throws(JOSEError) {
        let unknown = critical.filter { !understood.contains($0) }
        guard unknown.isEmpty else { throw .unknownCriticalHeader(unknown) }
    }

    /// Whether `typ` names `expected`, compared case-insensitively and with the
    /// `application/` prefix optional (RFC 7515 §4.1.9).
    ///
    /// Media types are case-insensitive in ASCII only (RFC 2045 §5.1), so only A-Z fold:
    /// Unicode lowercasing would let a KELVIN SIGN in `typ` stand for a `k`.
    public func typeMatches(_ expected: String) -> Bool {
        guard let type else { return false }
        return Self.normalizedMediaType(type) == Self.normalizedMediaType(expected)
    }

    /// `value`'s UTF-8 with A-Z folded to a-z, with `application/` before it when it has no `/`.
    static func normalizedMediaType(_ value: String) -> [UInt8] {
        var bytes: [UInt8] = []
        let slash = UInt8(ascii: "/")
        if !value.utf8.contains(slash) { bytes = Array("application/".utf8) }
        bytes.reserveCapacity(bytes.count + value.utf8.count)
        for byte in value.utf8 { bytes.append((0x41...0x5A).contains(byte) ? byte | 0x20 : byte) }
        return bytes
    }
}
