import CBOR
import Foundation
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletStorage

/// What DCQL matching sees of one credential: its format, type, claims, whether it is
/// bound to a holder key, and the Authority Key Identifiers of its issuer's chain.
/// An SD-JWT VC read from its bytes also keeps the SD-JWT, so that a candidate can say
/// what a presentation of it would reveal.
public struct DcqlCredential: Sendable, Hashable {
    /// The claims of a credential in the shape its format's claims path pointers address.
    public enum Claims: Sendable, Hashable {
        /// A JSON-based credential (SD-JWT VC): every claim, disclosures applied (§7.1).
        case json(JSONObject)
        /// An mdoc: data element values by namespace and identifier, converted to JSON
        /// as RFC 8949 §6.1 advises (§6.3, §7.2).
        case mdoc([String: [String: JSONValue]])
    }

    /// The wallet's id of the credential.
    public let id: CredentialId
    /// Its Credential Format Identifier (`dc+sd-jwt`, `mso_mdoc`).
    public let format: String
    /// Its `vct` or docType.
    public let type: String
    /// Its claims.
    public let claims: Claims
    /// Whether a presentation can carry a holder-binding proof (an SD-JWT with `cnf`; every mdoc).
    public let isHolderBound: Bool
    /// The keyIdentifier of the AuthorityKeyIdentifier of each certificate in the issuer's
    /// chain that has one (§6.1.1.1).
    public let authorityKeyIdentifiers: [[UInt8]]
    /// mdoc: what the MSO lets the device key sign in DeviceSigned (App. B.2.1).
    public let keyAuthorizations: KeyAuthorizations?
    /// SD-JWT VC: the credential itself, when known; a candidate's
    /// ``PresentationCandidate/revealedPaths`` come from its disclosure structure.
    public let sdJwt: SDJWT?

    /// A credential as matching sees it.
    public init(id: CredentialId, format: String, type: String, claims: Claims, isHolderBound: Bool,
                authorityKeyIdentifiers: [[UInt8]] = [], keyAuthorizations: KeyAuthorizations? = nil,
                sdJwt: SDJWT? = nil) {
        self.id = id
        self.format = format
        self.type = type
        self.claims = claims
        self.isHolderBound = isHolderBound
        self.authorityKeyIdentifiers = authorityKeyIdentifiers
        self.keyAuthorizations = keyAuthorizations
        self.sdJwt = sdJwt
    }

    /// Equal when every property is.
    public static func == (lhs: DcqlCredential, rhs: DcqlCredential) -> Bool {
        lhs.id == rhs.id && lhs.format == rhs.format && lhs.type == rhs.type && lhs.claims == rhs.claims
            && lhs.isHolderBound == rhs.isHolderBound && lhs.authorityKeyIdentifiers == rhs.authorityKeyIdentifiers
            && lhs.keyAuthorizations == rhs.keyAuthorizations && lhs.sdJwt == rhs.sdJwt
    }

    /// Hashes every property but `sdJwt` (whose claims `claims` already carries), so that
    /// equal values hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(format)
        hasher.combine(type)
        hasher.combine(claims)
        hasher.combine(isHolderBound)
        hasher.combine(authorityKeyIdentifiers)
        hasher.combine(keyAuthorizations)
    }

    /// Reads a stored credential's first instance (all instances carry the same claims).
    /// Returns nil for a deferred credential or one with nothing left to present.
    /// - Throws: `unreadable` when the stored bytes do not parse as their format.
    public init?(stored credential: StoredCredential) throws(DcqlCredentialError) {
        guard case .issued = credential.state, let instance = credential.instances.first else { return nil }
        // A one-time credential whose every instance was handed out cannot be presented again.
        if credential.policy.use == .oneTime, credential.instances.allSatisfy({ $0.useCount > 0 }) { return nil }
        switch credential.format {
        case .sdJwtVc:
            try self.init(sdJwt: instance.raw, id: credential.id)
        case .msoMdoc:
            try self.init(mdoc: instance.raw, id: credential.id)
        }
    }

    /// Reads an SD-JWT VC (its compact serialization's UTF-8).
    public init(sdJwt raw: [UInt8], id: CredentialId) throws(DcqlCredentialError) {
        guard let text = UTF8Validation.string(raw) else { throw .unreadable(credentialId: id) }
        let sdJwt: SDJWT
        let claims: JSONObject
        do {
            sdJwt = try SDJWT(compact: text)
            claims = try sdJwt.processed().claims
        } catch {
            throw .unreadable(credentialId: id)
        }
        let chain = (try? sdJwt.issuerSignedJWT.header.certificateChain()) ?? nil
        self.init(id: id, format: DcqlFormat.sdJwtVc, type: claims["vct"]?.stringValue ?? "", claims: .json(claims),
                  isHolderBound: sdJwt.payload["cnf"] != nil,
                  authorityKeyIdentifiers: (chain ?? []).compactMap(\.authorityKeyIdentifier), sdJwt: sdJwt)
    }

    /// Reads an mdoc (its IssuerSigned CBOR).
    public init(mdoc raw: [UInt8], id: CredentialId) throws(DcqlCredentialError) {
        let issuerSigned: IssuerSigned
        do { issuerSigned = try IssuerSigned(encoded: raw) } catch { throw .unreadable(credentialId: id) }
        var nameSpaces: [String: [String: JSONValue]] = [:]
        for space in issuerSigned.nameSpaces {
            let nameSpace = space.nameSpace
            var elements: [String: JSONValue] = nameSpaces[nameSpace] ?? [:]
            for item in space.elements { elements[item.item.elementIdentifier] = Self.json(item.item.elementValue) }
            nameSpaces[nameSpace] = elements
        }
        let chain = (try? issuerSigned.issuerAuth.x5chain()) ?? []
        let mso = issuerSigned.mobileSecurityObject
        self.init(id: id, format: DcqlFormat.msoMdoc, type: mso.docType, claims: .mdoc(nameSpaces), isHolderBound: true,
                  authorityKeyIdentifiers: chain.compactMap(\.authorityKeyIdentifier),
                  keyAuthorizations: mso.keyAuthorizations)
    }

    /// A CBOR data element as JSON, following RFC 8949 §6.1 where it is defined: tags are
    /// dropped (a full-date stays its text), byte strings become base64url, maps with
    /// text keys become objects. What has no JSON form becomes `null`, which no DCQL
    /// `values` entry can equal.
    static func json(_ value: CBOR) -> JSONValue {
        switch value {
        case .unsigned(let number):
            return number <= UInt64(Int64.max) ? .integer(Int64(number)) : .number(Double(number))
        case .negative(let magnitude):
            // CBOR negative n is the number -1 - n.
            return magnitude < UInt64(Int64.max) ? .integer(-1 - Int64(magnitude)) : .number(-1 - Double(magnitude))
        case .textString(let text): return .string(text)
        case .byteString(let bytes): return .string(Base64URL.encode(bytes))
        case .boolean(let flag): return .bool(flag)
        case .null, .undefined, .simple: return .null
        case .tagged(_, let inner): return json(inner)
        case .array(let elements): return .array(elements.map(json))
        case .map(let map):
            var members = JSONObject()
            for entry in map.entries {
                guard case .textString(let name) = entry.key else { return .null }
                members[name] = json(entry.value)
            }
            return .object(members)
        case .half, .float, .double:
            guard let double = value.doubleValue, double.isFinite else { return .null }
            return .number(double)
        }
    }
}

/// Why a stored credential could not be read for matching.
public enum DcqlCredentialError: Error, Hashable, Sendable {
    /// The stored bytes do not parse as the credential's format.
    case unreadable(credentialId: CredentialId)
}
