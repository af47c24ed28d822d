import CBOR
import COSE
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The structure a reader shows first in reverse engagement (ISO 18013-5 2nd edition
/// §8.2.2.5): `{0: version, 1: Security with EReaderKeyBytes, ? 2: ConnectionMethods,
/// ? 5: OriginInfos}`. Its bytes take DeviceEngagement's place in the SessionTranscript's
/// handover for reverse engagement.
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

    /// The URI form `mdoc-reader:` + base64url of the engagement bytes.
    public var uri: String { "mdoc-reader:" + Base64URL.encode(encodedBytes) }
}
