import CBOR
import COSE
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// The ephemeral-key part of an engagement: `Security = [cipherSuiteIdentifier,
/// EDeviceKeyBytes]` (ISO 18013-5 §8.2.1.1), keeping the key's exact bytes.
public struct EngagementSecurity: Sendable, Hashable {
    /// The only cipher suite the standard defines (ECDH + HKDF-SHA-256 + AES-256-GCM).
    public static let cipherSuite1 = 1
    /// The cipher suite identifier.
    public let cipherSuite: Int
    /// The ephemeral public key.
    public let eDeviceKey: COSEKey
    /// The COSE_Key bytes inside `EDeviceKeyBytes` (the content of the tag-24 item).
    public let eDeviceKeyEncoded: [UInt8]

    /// `EDeviceKeyBytes`: `#6.24(bstr .cbor COSE_Key)`.
    public var eDeviceKeyBytes: [UInt8] { CBORSplice.embedded(eDeviceKeyEncoded) }

    /// Security for a freshly generated ephemeral key (cipher suite 1).
    public init(eDeviceKey: ECPublicKey) {
        let key = COSEKey(publicKey: .ec(eDeviceKey))
        self.cipherSuite = Self.cipherSuite1
        self.eDeviceKey = key
        self.eDeviceKeyEncoded = key.encoded()
    }

    init(item: CBORItem, what: String) throws(MdocError) {
        let parts = try item.requiredArray(what)
        guard parts.count >= 2 else { throw .malformed(what, .wrongElementCount(expected: 2, actual: parts.count)) }
        cipherSuite = try parts[0].int("\(what) cipher suite")
        guard cipherSuite == Self.cipherSuite1 else { throw .unsupportedCipherSuite(cipherSuite) }
        let keyItem = try MdocDecoding.embedded(parts[1], "EDeviceKeyBytes")
        eDeviceKeyEncoded = keyItem.exactBytes
        do { eDeviceKey = try COSEKey(cbor: keyItem.value) } catch { throw .cose(error) }
    }

    /// The ephemeral key as an EC public key, for ECDH.
    /// - Throws: `cose` when it is not an EC2 key.
    public func ecPublicKey() throws(MdocError) -> ECPublicKey {
        let key: PublicKey
        do { key = try eDeviceKey.publicKey() } catch { throw .cose(error) }
        guard case .ec(let ecKey) = key else { throw .cose(.invalidKey(.wrongKeyType(expected: .ec2))) }
        return ecKey
    }

    var cbor: CBOR { [CBOR(cipherSuite), .tagged(24, .byteString(eDeviceKeyEncoded))] }
}

/// An origin the engagement was received from or is meant for (ISO 18013-5 §8.2.1.1,
/// `OriginInfo = {"cat": uint, "type": uint, "details": any}`).
public struct OriginInfo: Sendable, Hashable {
    /// Category: 0 delivery, 1 receive.
    public var category: UInt64
    /// Type of the origin (1 website).
    public var type: UInt64
    /// Type-specific details (for a website, `{"baseUrl": tstr}`).
    public var details: CBOR
    /// An origin info with all its fields.
    public init(category: UInt64, type: UInt64, details: CBOR) {
        self.category = category
        self.type = type
        self.details = details
    }
    var cbor: CBOR { .map(CBORMap([("cat", .unsigned(category)), ("type", .unsigned(type)), ("details", details)])) }
    init(cbor: CBOR) throws(MdocError) {
        guard let category = cbor["cat"]?.uint64Value, let type = cbor["type"]?.uint64Value else {
            throw .malformed("OriginInfo", .ruleViolated)
        }
        self.init(category: category, type: type, details: cbor["details"] ?? .null)
    }
}

/// The structure an mdoc shows (QR code or NFC) to start a session (ISO 18013-5 §8.2.1.1).
///
/// A parsed engagement keeps the bytes it was read from: `DeviceEngagementBytes` in the
/// SessionTranscript are those bytes, never a re-encoding.
public struct DeviceEngagement: Sendable, Hashable {
    /// Key 0: the version, "1.0" (or "1.1" with the 2nd edition's additions).
    public let version: String
    /// Key 1: cipher suite and ephemeral key.
    public let security: EngagementSecurity
    /// Key 2: ways to reach the mdoc (empty when the engagement carries none).
    public let deviceRetrievalMethods: [DeviceRetrievalMethod]
    /// Key 3: server retrieval information, as decoded (not used by this module).
    public let serverRetrievalMethods: CBOR?
    /// Key 4: protocol information, as decoded.
    public let protocolInfo: CBOR?
    /// Key 5: origin infos.
    public let originInfos: [OriginInfo]
    /// Key 6: capabilities (integer keys, e.g. 2 handover session establishment support,
    /// 3 reader authentication all support), as decoded.
    public let capabilities: CBORMap?
    /// The encoded engagement, exactly as received or as built.
    public let encodedBytes: [UInt8]

    /// Builds an engagement; the map is written with keys in ascending order.
    public init(version: String = "1.0", security: EngagementSecurity, deviceRetrievalMethods: [DeviceRetrievalMethod] = [],
                originInfos: [OriginInfo] = [], capabilities: CBORMap? = nil) {
        self.version = version
        self.security = security
        self.deviceRetrievalMethods = deviceRetrievalMethods
        self.serverRetrievalMethods = nil
        self.protocolInfo = nil
        self.originInfos = originInfos
        self.capabilities = capabilities
        var map = CBORMap()
        map.append(key: 0, value: .textString(version))
        map.append(key: 1, value: security.cbor)
        if !deviceRetrievalMethods.isEmpty { map.append(key: 2, value: .array(deviceRetrievalMethods.map(\.cbor))) }
        if !originInfos.isEmpty { map.append(key: 5, value: .array(originInfos.map(\.cbor))) }
        if let capabilities { map.append(key: 6, value: .map(capabilities)) }
        encodedBytes = CBOR.map(map).encoded()
    }

    /// Parses DeviceEngagement bytes, keeping them.
    /// - Throws: `cbor`, `malformed`, `unsupportedVersion` (major version other than 1),
    ///   `unsupportedCipherSuite`, `cose`.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        let item = try MdocDecoding.item(bytes)
        try self.init(item: item)
    }

    init(item: CBORItem) throws(MdocError) {
        let common = try EngagementFields(item: item, what: "DeviceEngagement", methodsName: "DeviceRetrievalMethods")
        version = common.version
        security = common.security
        deviceRetrievalMethods = common.methods
        serverRetrievalMethods = item[3]?.value
        protocolInfo = item[4]?.value
        originInfos = common.originInfos
        if let capabilitiesItem = item[6] {
            guard let map = capabilitiesItem.value.mapValue else { throw .malformed("Capabilities", .wrongType(expected: .map)) }
            capabilities = map
        } else {
            capabilities = nil
        }
        encodedBytes = item.exactBytes
    }

    /// `DeviceEngagementBytes`: `#6.24(bstr .cbor DeviceEngagement)`.
    public var taggedBytes: [UInt8] { CBORSplice.embedded(encodedBytes) }

    /// The QR code form: `mdoc:` followed by the base64url (unpadded) engagement bytes
    /// (ISO 18013-5 §8.2.2.3).
    public var uri: String { "mdoc:" + Base64URL.encode(encodedBytes) }

    /// Parses the `mdoc:` URI form.
    /// - Throws: `invalidEngagementURI`, then the errors of `init(encoded:)`.
    public init(uri: String) throws(MdocError) {
        guard uri.hasPrefix("mdoc:"), let bytes = Base64URL.decode(uri.dropFirst(5)) else { throw .invalidEngagementURI }
        try self.init(encoded: bytes)
    }
}

/// The members DeviceEngagement and ReaderEngagement share (ISO 18013-5 §8.2.1.1,
/// ISO 18013-7 reverse engagement): version (0), security (1), the retrieval or
/// connection methods (2) and origin infos (5), parsed with the same checks.
struct EngagementFields {
    let version: String
    let security: EngagementSecurity
    let methods: [DeviceRetrievalMethod]
    let originInfos: [OriginInfo]

    init(item: CBORItem, what: String, methodsName: String) throws(MdocError) {
        _ = try item.requiredMap(what)
        guard let versionItem = item[0] else { throw .malformed(what, .missingMember("version (0)")) }
        version = try versionItem.text("\(what) version")
        guard version.hasPrefix("1.") else { throw .unsupportedVersion(version) }
        guard let securityItem = item[1] else { throw .malformed(what, .missingMember("security (1)")) }
        security = try EngagementSecurity(item: securityItem, what: "\(what) security")
        methods = try item[2].map { methods throws(MdocError) in
            try methods.requiredArray(methodsName).map { item throws(MdocError) in try DeviceRetrievalMethod(cbor: item.value) }
        } ?? []
        originInfos = try item[5].map { origins throws(MdocError) in
            try origins.requiredArray("OriginInfos").map { item throws(MdocError) in try OriginInfo(cbor: item.value) }
        } ?? []
    }
}
