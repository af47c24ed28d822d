import WalletCrypto

/// Configuration of an engagement and of the transfer that follows it.
public struct EngagementConfig: Sendable {
    /// How long a QR/NFC engagement waits for a reader (nil: until closed); when it
    /// passes, the engagement ends with a timeout and its listener is closed.
    public var engagementTimeout: Duration?
    /// How long the holder waits for each message of the reader (not while the user
    /// decides on a request).
    public var messageTimeout: Duration
    /// How long the document provider may take to supply credentials and consent and
    /// to sign the response.
    public var providerTimeout: Duration
    /// For `.toApp`: how long connecting to the reader may take.
    public var connectTimeout: Duration
    /// For `.toApp`: the reader's engagement URI from its QR code (`mdoc:` or `mdoc://`).
    public var readerEngagementUri: String?
    /// Reader roots: when set, reader authentication in requests is verified against
    /// them, and a request whose authentication fails ends the session (status 11).
    public var readerTrustAnchors: [WalletCrypto.X509Certificate]?
    /// Whether every document request must carry reader authentication that verifies
    /// under ``readerTrustAnchors``. ISO/IEC 18013-5 §9.1.4 leaves reader authentication
    /// optional, so by default (false) a request without it reaches the user with no
    /// reader identity. When true, such a request ends the session before the user sees
    /// it (``ProximityError/readerAuthenticationFailed(_:)`` with
    /// ``MdocError/readerAuthenticationMissing``, status 11); without anchors no reader
    /// can verify, so every request ends the session.
    public var requireReaderAuthentication: Bool

    /// Creates a configuration.
    public init(engagementTimeout: Duration? = nil, messageTimeout: Duration = .seconds(30),
                providerTimeout: Duration = .seconds(120), connectTimeout: Duration = .seconds(15),
                readerEngagementUri: String? = nil, readerTrustAnchors: [WalletCrypto.X509Certificate]? = nil,
                requireReaderAuthentication: Bool = false) {
        self.engagementTimeout = engagementTimeout
        self.messageTimeout = messageTimeout
        self.providerTimeout = providerTimeout
        self.connectTimeout = connectTimeout
        self.readerEngagementUri = readerEngagementUri
        self.readerTrustAnchors = readerTrustAnchors
        self.requireReaderAuthentication = requireReaderAuthentication
    }

    /// Returns a copy with `readerEngagementUri` set (the scan-then-engage flow).
    public func with(readerEngagementUri uri: String) -> EngagementConfig {
        var copy = self
        copy.readerEngagementUri = uri
        return copy
    }
}
