import CBOR
import COSE
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The structure a reader shows first in reverse engagement (ISO/IEC 18013-7, and the
/// second edition of 18013-5): `{0: version, 1: Security with EReaderKeyBytes,
/// ? 2: ConnectionMethods, ? 5: OriginInfos}`, the same layout as DeviceEngagement; other
/// keys a reader adds are ignored. Its bytes, as received, become the SessionTranscript's
/// handover (``Handover/reverseEngagement(readerEngagementEncoded:)``).
public struct ReaderEngagement: Sendable, Hashable {
    /// Key 0: the version.
    public let version: String
    /// Key 1: cipher suite and the reader's ephemeral key (same layout as the mdoc's).
    public let security: EngagementSecurity
    /// Key 2: connection methods the reader offers.
    public let connectionMethods: [DeviceRetrievalMethod]
    /// Key 5: origin infos.
    public let originInfos: [OriginInfo]
    /// The encoded engagement, exactly as received or as built.
    public let encodedBytes: [UInt8]

    /// Builds a reader engagement; keys in ascending order.
    public init(version: String = "1.1", security: EngagementSecurity, connectionMethods: [DeviceRetrievalMethod] = [],
                originInfos: [OriginInfo] = []) {
        self.version = version
        self.security = security
        self.connectionMethods = connectionMethods
        self.originInfos = originInfos
        var map = CBORMap()
        map.append(key: 0, value: .textString(version))
        map.append(key: 1, value: security.cbor)
        if !connectionMethods.isEmpty { map.append(key: 2, value: .array(connectionMethods.map(\.cbor))) }
        if !originInfos.isEmpty { map.append(key: 5, value: .array(originInfos.map(\.cbor))) }
        encodedBytes = CBOR.map(map).encoded()
    }

    /// Parses ReaderEngagement bytes, keeping them.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        let item = try MdocDecoding.item(bytes)
        let common = try EngagementFields(item: item, what: "ReaderEngagement", methodsName: "ConnectionMethods")
        version = common.version
        security = common.security
        connectionMethods = common.methods
        originInfos = common.originInfos
        encodedBytes = bytes
    }

    /// `ReaderEngagementBytes`: `#6.24(bstr .cbor ReaderEngagement)`.
    public var taggedBytes: [UInt8] { CBORSplice.embedded(encodedBytes) }

    /// The QR code form: `mdoc:` + base64url (unpadded) of the engagement bytes, the same
    /// scheme ISO 18013-5 §8.2.2.3 uses for DeviceEngagement (the app knows which one it
    /// scans: a holder scans a reader's code only in the reverse, to-app flow).
    public var uri: String { "mdoc:" + Base64URL.encode(encodedBytes) }

    /// Parses the URI a reader shows or links to: `mdoc:` + base64url (the QR form), or
    /// `mdoc://` + base64url (the form ISO/IEC 18013-7 uses in links to a reader website).
    /// - Throws: `invalidEngagementURI`, then the errors of ``init(encoded:)``.
    public init(uri: String) throws(MdocError) {
        let payload: Substring
        if uri.hasPrefix("mdoc://") {
            payload = uri.dropFirst(7)
        } else if uri.hasPrefix("mdoc:") {
            payload = uri.dropFirst(5)
        } else {
            throw .invalidEngagementURI
        }
        guard let bytes = Base64URL.decode(payload) else { throw .invalidEngagementURI }
        try self.init(encoded: bytes)
    }
}
