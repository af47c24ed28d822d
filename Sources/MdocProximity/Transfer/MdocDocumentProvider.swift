import Mdoc
import WalletCrypto

/// Supplies the credentials that answer a DeviceRequest and how each authenticates.
public protocol MdocDocumentProvider: Sendable {
    /// The stored credentials that may answer `request` (the first per docType is used).
    func credentials(for request: DeviceRequest) async throws -> [IssuerSigned]
    /// How `credential` authenticates (device signature or MAC).
    func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod
    /// By docType, the elements the user released; `nil` releases everything requested.
    func consent(for request: DeviceRequest) async -> [String: [String: Set<String>]]?
}

extension MdocDocumentProvider {
    /// Everything requested is released.
    public func consent(for request: DeviceRequest) async -> [String: [String: Set<String>]]? { nil }
}

/// A provider over a fixed list of credentials that share one device-key signer
/// (tests, demos, simple apps).
public struct StaticDocumentProvider: MdocDocumentProvider {
    /// The credentials.
    public let documents: [IssuerSigned]
    /// The device key signer for all of them.
    public let signer: any Signer

    /// Creates a provider.
    public init(documents: [IssuerSigned], signer: any Signer) {
        self.documents = documents
        self.signer = signer
    }

    /// All documents.
    public func credentials(for request: DeviceRequest) async throws -> [IssuerSigned] { documents }

    /// A device signature by ``signer``.
    public func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod { .signature(signer) }
}

/// Configuration of an engagement and of the transfer that follows it.
public struct EngagementConfig: Sendable {
    /// How long a QR/NFC engagement waits for a reader (nil: until closed).
    public var engagementTimeout: Duration?
    /// How long to wait for each message of the reader.
    public var messageTimeout: Duration
    /// For `.toApp`: the reader's `mdoc-reader:` URI from its QR code.
    public var readerEngagementUri: String?
    /// Reader roots: when set, reader authentication in requests is verified against them.
    public var readerTrustAnchors: [WalletCrypto.X509Certificate]?

    /// Creates a configuration.
    public init(engagementTimeout: Duration? = nil, messageTimeout: Duration = .seconds(30),
                readerEngagementUri: String? = nil, readerTrustAnchors: [WalletCrypto.X509Certificate]? = nil) {
        self.engagementTimeout = engagementTimeout
        self.messageTimeout = messageTimeout
        self.readerEngagementUri = readerEngagementUri
        self.readerTrustAnchors = readerTrustAnchors
    }

    /// Returns a copy with `readerEngagementUri` set (the scan-then-engage flow).
    public func with(readerEngagementUri uri: String) -> EngagementConfig {
        var copy = self
        copy.readerEngagementUri = uri
        return copy
    }
}
