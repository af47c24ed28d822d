import Foundation
import WalletEncoding
import WalletCrypto

/// The claims of a JWT (RFC 7519 §4): typed access to the registered claims and
/// raw access to all of them. `rawBytes` are the payload bytes exactly as signed.
public struct JWTClaims: Sendable, Equatable {
    /// All claims.
    public let members: JSONObject
    /// The JSON bytes the claims were read from (or serialized to).
    public let rawBytes: [UInt8]

    /// Parses a JWT payload; registered claims of the wrong JSON type are rejected.
    public init(json: [UInt8]) throws(JOSEError) {
        self.members = try JSONValue.parseObject(json, what: .jwtClaims)
        self.rawBytes = json
        try checkRegisteredTypes()
    }

    /// Claims from members (serialized with sorted names).
    public init(_ members: JSONObject) throws(JOSEError) {
        self.members = members
        self.rawBytes = JSONValue.object(members).serializedBytes
        try checkRegisteredTypes()
    }

    private func checkRegisteredTypes() throws(JOSEError) {
        for name in ["iss", "sub", "jti", "nonce"] {
            if let member = members[name], member.stringValue == nil { throw .invalidClaim(name) }
        }
        for name in ["exp", "nbf", "iat"] {
            if let member = members[name], member.doubleValue == nil { throw .invalidClaim(name) }
        }
        if let aud = members["aud"] {
            let valid = aud.stringValue != nil || (aud.arrayValue.map { $0.allSatisfy { $0.stringValue != nil } } ?? false)
            guard valid else { throw .invalidClaim("aud") }
        }
        if let cnf = members["cnf"], cnf.objectValue == nil { throw .invalidClaim("cnf") }
    }

    /// Claim `name`.
    public subscript(name: String) -> JSONValue? { members[name] }

    /// `iss`.
    public var issuer: String? { members["iss"]?.stringValue }
    /// `sub`.
    public var subject: String? { members["sub"]?.stringValue }
    /// `aud`, a single string read as a one-element array.
    public var audience: [String] {
        guard let aud = members["aud"] else { return [] }
        if let single = aud.stringValue { return [single] }
        return aud.arrayValue?.compactMap(\.stringValue) ?? []
    }
    /// `exp`.
    public var expiration: Date? { date("exp") }
    /// `nbf`.
    public var notBefore: Date? { date("nbf") }
    /// `iat`.
    public var issuedAt: Date? { date("iat") }
    /// `jti`.
    public var jwtID: String? { members["jti"]?.stringValue }
    /// `nonce`.
    public var nonce: String? { members["nonce"]?.stringValue }
    /// `cnf` (RFC 7800), e.g. `{"jwk": {...}}` or `{"jkt": "..."}`.
    public var confirmation: JSONObject? { members["cnf"]?.objectValue }
    /// The JWK of `cnf.jwk`, parsed strictly.
    public func confirmationKey() throws(JOSEError) -> JWK? {
        guard let members = confirmation?["jwk"]?.objectValue else { return nil }
        return try JWK(members: members)
    }

    /// The JWK of `cnf.jwk`, parsed strictly, expecting it to be `expected` (see
    /// `JWK.init(members:expecting:)`).
    package func confirmationKey(expecting expected: PublicKey) throws(JOSEError) -> JWK? {
        guard let members = confirmation?["jwk"]?.objectValue else { return nil }
        return try JWK(members: members, expecting: expected)
    }

    private func date(_ name: String) -> Date? {
        members[name]?.doubleValue.map { Date(timeIntervalSince1970: $0) }
    }
}
