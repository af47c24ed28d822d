import Foundation
import WalletCrypto
import WalletEncoding

/// The wallet's identifier of a stored credential (what issuance returns and
/// presentation selections name).
public typealias CredentialId = String

/// The format of a stored credential (OpenID4VCI 1.0 Appendix A format identifiers).
public enum CredentialFormat: String, Sendable, Hashable, CaseIterable {
    /// SD-JWT VC.
    case sdJwtVc = "dc+sd-jwt"
    /// ISO/IEC 18013-5 mdoc.
    case msoMdoc = "mso_mdoc"
}

/// How the instances of a credential are spent at presentation time (issuance spec,
/// "Key policy and batch size").
public enum KeyUse: String, Sendable, Hashable, CaseIterable {
    /// Each presentation consumes a fresh instance, whose key is then deleted: no two
    /// presentations share a key, so verifiers cannot link them.
    case oneTime = "one_time"
    /// Instances are reused, least used first: fewer keys, but presentations with the
    /// same instance are linkable.
    case rotate
}

/// How many instances (holder keys) a credential is issued with and how they are used.
public struct CredentialPolicy: Sendable, Hashable {
    /// The number of instances requested in one batch (at least 1).
    public let batchSize: Int
    /// How instances are consumed.
    public let use: KeyUse

    /// A policy; the default is one instance, rotated.
    public init(batchSize: Int = 1, use: KeyUse = .rotate) {
        self.batchSize = batchSize
        self.use = use
    }
}

/// Where a credential is in its life.
public enum CredentialState: Sendable, Hashable {
    /// Issued: its instances can be presented.
    case issued
    /// The issuer accepted the request but has not minted the credential yet
    /// (OpenID4VCI 1.0 §9): poll again with `transactionId`, not before `retryAfter`.
    case deferred(transactionId: String, retryAfter: Date?)
}

/// Display metadata from the issuer (OpenID4VCI 1.0 §12.2.4 `display` entries).
public struct DisplayMetadata: Sendable, Hashable {
    /// The display name.
    public var name: String?
    /// The BCP 47 language tag.
    public var locale: String?
    /// A logo URI.
    public var logoURI: String?
    /// Alternative text for the logo.
    public var logoAltText: String?
    /// A description.
    public var description: String?
    /// Background colour (CSS colour).
    public var backgroundColor: String?
    /// Text colour (CSS colour).
    public var textColor: String?

    /// Display metadata; every field optional.
    public init(name: String? = nil, locale: String? = nil, logoURI: String? = nil, logoAltText: String? = nil,
                description: String? = nil, backgroundColor: String? = nil, textColor: String? = nil) {
        self.name = name
        self.locale = locale
        self.logoURI = logoURI
        self.logoAltText = logoAltText
        self.description = description
        self.backgroundColor = backgroundColor
        self.textColor = textColor
    }
}

extension DisplayMetadata {
    /// The OpenID4VCI member names of each field (`logo` nests `uri` and `alt_text`).
    private enum Member {
        static let name = "name", locale = "locale", logo = "logo", uri = "uri", altText = "alt_text",
                   description = "description", backgroundColor = "background_color", textColor = "text_color"
    }

    /// The entry as OpenID4VCI 1.0 §12.2.4 writes it (absent fields omitted).
    public var jsonValue: JSONValue {
        var members = JSONObject()
        members[Member.name] = name.map(JSONValue.string)
        members[Member.locale] = locale.map(JSONValue.string)
        if logoURI != nil || logoAltText != nil {
            var logo = JSONObject()
            logo[Member.uri] = logoURI.map(JSONValue.string)
            logo[Member.altText] = logoAltText.map(JSONValue.string)
            members[Member.logo] = .object(logo)
        }
        members[Member.description] = description.map(JSONValue.string)
        members[Member.backgroundColor] = backgroundColor.map(JSONValue.string)
        members[Member.textColor] = textColor.map(JSONValue.string)
        return .object(members)
    }

    /// Reads an entry in the form of ``jsonValue``; unknown members are ignored, known
    /// members of the wrong type are an error.
    public init(json members: JSONObject) throws(JSONError) {
        let logo = try members.optionalObject(Member.logo)
        self.init(name: try members.optionalString(Member.name), locale: try members.optionalString(Member.locale),
                  logoURI: try logo?.optionalString(Member.uri), logoAltText: try logo?.optionalString(Member.altText),
                  description: try members.optionalString(Member.description),
                  backgroundColor: try members.optionalString(Member.backgroundColor),
                  textColor: try members.optionalString(Member.textColor))
    }
}

/// The issuer of a credential, as captured at issuance.
public struct IssuerInfo: Sendable, Hashable {
    /// The Credential Issuer Identifier (a URL).
    public let identifier: String
    /// The issuer's display metadata.
    public let display: [DisplayMetadata]

    /// Issuer facts.
    public init(identifier: String, display: [DisplayMetadata] = []) {
        self.identifier = identifier
        self.display = display
    }
}

/// One issued copy of a credential, bound to its own holder key.
public struct CredentialInstance: Sendable, Hashable, CustomStringConvertible {
    /// Position within the credential (0-based).
    public let index: Int
    /// The alias of the holder key in the secure area.
    public let keyAlias: String
    /// The credential exactly as issued (an SD-JWT VC string's UTF-8, or mdoc IssuerSigned CBOR).
    public let raw: [UInt8]
    /// How many times it has been handed out for a presentation.
    public let useCount: Int

    /// An instance; `useCount` is 0 for a newly issued one.
    public init(index: Int, keyAlias: String, raw: [UInt8], useCount: Int = 0) {
        self.index = index
        self.keyAlias = keyAlias
        self.raw = raw
        self.useCount = useCount
    }

    /// Index, alias, size and use count; not the credential bytes.
    public var description: String { "CredentialInstance(#\(index), key \(keyAlias), \(raw.count) bytes, used \(useCount)x)" }
}

/// A credential as the store keeps it.
public struct StoredCredential: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The wallet's identifier of the credential.
    public let id: String
    /// Its format.
    public let format: CredentialFormat
    /// The `vct` (SD-JWT VC) or `docType` (mdoc).
    public let type: String
    /// The issuer and its display metadata.
    public let issuer: IssuerInfo
    /// The credential's display metadata.
    public let display: [DisplayMetadata]
    /// The issued instances (empty while deferred).
    public let instances: [CredentialInstance]
    /// The key policy it was issued under.
    public let policy: CredentialPolicy
    /// Issued or deferred.
    public let state: CredentialState
    /// The refresh token for reissuance (stored encrypted; kept out of `description`).
    public let refreshToken: String?
    /// What the issuing protocol keeps to resume, renew or report on the credential later
    /// (an access token for a deferred transaction, key aliases, a notification id), in a
    /// form only that protocol reads. Stored encrypted like the refresh token; never printed.
    public let issuanceContext: [UInt8]?
    /// When it was first saved (set by the store).
    public let createdAt: Date
    /// When it was last saved (set by the store).
    public let updatedAt: Date

    /// A credential to save; the store sets the timestamps.
    public init(id: String, format: CredentialFormat, type: String, issuer: IssuerInfo, display: [DisplayMetadata] = [],
                instances: [CredentialInstance], policy: CredentialPolicy = CredentialPolicy(),
                state: CredentialState = .issued, refreshToken: String? = nil, issuanceContext: [UInt8]? = nil,
                createdAt: Date = Date(timeIntervalSince1970: 0), updatedAt: Date = Date(timeIntervalSince1970: 0)) {
        self.id = id
        self.format = format
        self.type = type
        self.issuer = issuer
        self.display = display
        self.instances = instances
        self.policy = policy
        self.state = state
        self.refreshToken = refreshToken
        self.issuanceContext = issuanceContext
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Identity, format, type, issuer and instance count; never the refresh token, the
    /// issuance context or credential bytes.
    public var description: String {
        "StoredCredential(\(id), \(format.rawValue), \(type), issuer \(issuer.identifier), \(instances.count) instances)"
    }

    /// A mirror without children, so `dump` cannot print the refresh token or the issuance context.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// Which credentials `CredentialStore.list(_:)` returns; nil fields match anything.
public struct CredentialFilter: Sendable, Hashable {
    /// Only this format.
    public var format: CredentialFormat?
    /// Only this `vct` / `docType`.
    public var type: String?
    /// Only this Credential Issuer Identifier.
    public var issuer: String?

    /// A filter; the default matches every credential.
    public init(format: CredentialFormat? = nil, type: String? = nil, issuer: String? = nil) {
        self.format = format
        self.type = type
        self.issuer = issuer
    }
}

/// An instance handed out for one presentation, with the means to sign for its key.
public struct ConsumedInstance: Sendable {
    /// The credential's id.
    public let credentialId: String
    /// The instance (its `useCount` includes this use).
    public let instance: CredentialInstance
    /// Signs with the instance's holder key (for a `.oneTime` credential, the key has
    /// already been deleted from the secure area; this signer is its last use).
    public let signer: any Signer
    /// ECDH with the instance's key (mdoc MAC device authentication), nil for Ed25519.
    public let keyAgreement: (any KeyAgreement)?
    /// Instances left after this one (for `.rotate`, all of them).
    public let remaining: Int
}
