import CBOR
import COSE
import WalletCrypto
import WalletRuntime

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
        _ = try item.requiredMap("ReaderEngagement")
        guard let versionItem = item[0] else { throw .malformed("ReaderEngagement has no version (0)") }
        version = try versionItem.text("ReaderEngagement version")
        guard version.hasPrefix("1.") else { throw .unsupportedVersion(version) }
        guard let securityItem = item[1] else { throw .malformed("ReaderEngagement has no security (1)") }
        security = try EngagementSecurity(item: securityItem, what: "ReaderEngagement security")
        if let methods = item[2] {
            connectionMethods = try methods.requiredArray("ConnectionMethods").map { item throws(MdocError) in
                try DeviceRetrievalMethod(cbor: item.value)
            }
        } else {
            connectionMethods = []
        }
        if let origins = item[5] {
            originInfos = try origins.requiredArray("OriginInfos").map { item throws(MdocError) in try OriginInfo(cbor: item.value) }
        } else {
            originInfos = []
        }
        encodedBytes = bytes
    }

    /// `ReaderEngagementBytes`: `#6.24(bstr .cbor ReaderEngagement)`.
    public var taggedBytes: [UInt8] { CBORSplice.embedded(encodedBytes) }

    /// The URI form `mdoc-reader:` + base64url of the engagement bytes.
    public var uri: String { "mdoc-reader:" + Base64URL.encode(encodedBytes) }
}
