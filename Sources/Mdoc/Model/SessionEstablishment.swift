import CBOR
import COSE
import WalletCrypto

/// The reader's first message (ISO 18013-5 §9.1.1.4):
/// `{"eReaderKey": EReaderKeyBytes, "data": bstr}`, data being the encrypted DeviceRequest.
public struct SessionEstablishment: Sendable, Hashable {
    /// The COSE_Key bytes inside `EReaderKeyBytes`, as received: they go into the
    /// SessionTranscript unchanged.
    public let eReaderKeyEncoded: [UInt8]
    /// The reader's ephemeral public key.
    public let eReaderKey: COSEKey
    /// The encrypted message (ciphertext || tag).
    public let data: [UInt8]
    /// The encoded message, as received or built.
    public let encodedBytes: [UInt8]

    /// A message for `eReaderKey` carrying `data`.
    public init(eReaderKey: ECPublicKey, data: [UInt8]) {
        let key = COSEKey(publicKey: .ec(eReaderKey))
        self.eReaderKey = key
        self.eReaderKeyEncoded = key.encoded()
        self.data = data
        var splice = CBORSplice()
        splice.mapHead(2)
        splice.text("eReaderKey")
        splice.embedded(eReaderKeyEncoded)
        splice.text("data")
        splice.byteString(data)
        encodedBytes = splice.bytes
    }

    /// Parses a SessionEstablishment message.
    /// - Throws: `cbor` / `malformed` (status 11), `cose` for an unreadable key.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        let item = try MdocDecoding.item(bytes)
        let keyItem = try MdocDecoding.embedded(try item.required("eReaderKey", in: "SessionEstablishment"), "EReaderKeyBytes")
        eReaderKeyEncoded = keyItem.exactBytes
        do { eReaderKey = try COSEKey(cbor: keyItem.value) } catch { throw .cose(error) }
        data = try item.required("data", in: "SessionEstablishment").bytes("SessionEstablishment data")
        encodedBytes = bytes
    }

    /// The reader's ephemeral key as an EC public key.
    public func eReaderPublicKey() throws(MdocError) -> ECPublicKey {
        let key: PublicKey
        do { key = try eReaderKey.publicKey() } catch { throw .cose(error) }
        guard case .ec(let ecKey) = key else { throw .cose(.invalidKey(.wrongKeyType(expected: .ec2))) }
        return ecKey
    }
}

/// Every message after SessionEstablishment (ISO 18013-5 §9.1.1.4):
/// `{? "data": bstr, ? "status": uint}`.
public struct SessionData: Sendable, Hashable {
    /// Session status codes (ISO 18013-5 §9.1.1.5, Table 20).
    public struct Status: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric code.
        public let rawValue: UInt64
        /// Wraps a code.
        public init(rawValue: UInt64) { self.rawValue = rawValue }
        /// 10: error, session encryption.
        public static let sessionEncryptionError = Status(rawValue: 10)
        /// 11: error, CBOR decoding.
        public static let cborDecodingError = Status(rawValue: 11)
        /// 20: session termination.
        public static let sessionTermination = Status(rawValue: 20)
        /// The code as a number.
        public var description: String { String(rawValue) }
    }

    /// The encrypted message, if any.
    public let data: [UInt8]?
    /// The status, if any.
    public let status: Status?

    /// A message with encrypted data and/or a status.
    public init(data: [UInt8]? = nil, status: Status? = nil) {
        self.data = data
        self.status = status
    }

    /// The encoding: `data` first, then `status`.
    public var encodedBytes: [UInt8] {
        var map = CBORMap()
        if let data { map.append(key: "data", value: .byteString(data)) }
        if let status { map.append(key: "status", value: .unsigned(status.rawValue)) }
        return CBOR.map(map).encoded()
    }

    /// Parses a SessionData message.
    /// - Throws: `cbor` / `malformed` (status 11).
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        let item = try MdocDecoding.item(bytes)
        _ = try item.requiredMap("SessionData")
        data = try item["data"].map { item throws(MdocError) in try item.bytes("SessionData data") }
        status = try item["status"].map { item throws(MdocError) in Status(rawValue: try item.unsigned("SessionData status")) }
        guard data != nil || status != nil else { throw .malformed("SessionData", .ruleViolated) }
    }
}
