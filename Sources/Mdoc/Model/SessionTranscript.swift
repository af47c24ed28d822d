import CBOR
import COSE
import WalletCrypto

/// The data both sides bind their keys and signatures to (ISO 18013-5 §9.1.5.1):
/// `SessionTranscript = [DeviceEngagementBytes / null, EReaderKeyBytes / null, Handover]`.
///
/// Built from parts, or parsed from received bytes which are then kept exactly.
public struct SessionTranscript: Sendable, Hashable {
    /// The DeviceEngagement bytes (content of `DeviceEngagementBytes`), nil for OpenID4VP.
    public let deviceEngagementEncoded: [UInt8]?
    /// The COSE_Key bytes of the reader's ephemeral key (content of `EReaderKeyBytes`),
    /// nil for OpenID4VP.
    public let eReaderKeyEncoded: [UInt8]?
    /// How the session was set up.
    public let handover: Handover
    /// The encoded SessionTranscript array.
    public let encodedBytes: [UInt8]

    /// A proximity transcript: the engagement and reader key bytes exactly as exchanged.
    public init(deviceEngagementEncoded: [UInt8]?, eReaderKeyEncoded: [UInt8]?, handover: Handover) {
        self.deviceEngagementEncoded = deviceEngagementEncoded
        self.eReaderKeyEncoded = eReaderKeyEncoded
        self.handover = handover
        var splice = CBORSplice()
        splice.arrayHead(3)
        if let deviceEngagementEncoded { splice.embedded(deviceEngagementEncoded) } else { splice.value(.null) }
        if let eReaderKeyEncoded { splice.embedded(eReaderKeyEncoded) } else { splice.value(.null) }
        splice.value(handover.cbor)
        encodedBytes = splice.bytes
    }

    /// A proximity transcript from the engagement as shown and the reader key as received
    /// in SessionEstablishment.
    public init(deviceEngagement: DeviceEngagement, eReaderKeyEncoded: [UInt8], handover: Handover) {
        self.init(deviceEngagementEncoded: deviceEngagement.encodedBytes, eReaderKeyEncoded: eReaderKeyEncoded,
                  handover: handover)
    }

    /// The OpenID4VP transcript `[null, null, handover]` (OpenID4VP 1.0 Appendix B.2.6).
    public static func openID4VP(_ handover: Handover) -> SessionTranscript {
        SessionTranscript(deviceEngagementEncoded: nil, eReaderKeyEncoded: nil, handover: handover)
    }

    /// Parses a SessionTranscript, either the array itself or `SessionTranscriptBytes`
    /// (its tag-24 wrapping), keeping the array's exact bytes.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        var item = try MdocDecoding.item(bytes)
        if item.tag == 24 { item = try MdocDecoding.embedded(item, "SessionTranscriptBytes") }
        let parts = try item.requiredArray("SessionTranscript")
        guard parts.count == 3 else { throw .malformed("SessionTranscript", .wrongElementCount(expected: 3, actual: parts.count)) }
        func embeddedOrNull(_ part: CBORItem, _ what: String) throws(MdocError) -> [UInt8]? {
            if part.value.isNull { return nil }
            return try MdocDecoding.embedded(part, what).exactBytes
        }
        deviceEngagementEncoded = try embeddedOrNull(parts[0], "DeviceEngagementBytes")
        eReaderKeyEncoded = try embeddedOrNull(parts[1], "EReaderKeyBytes")
        handover = Handover(parsed: parts[2].value)
        encodedBytes = item.exactBytes
    }

    /// `SessionTranscriptBytes = #6.24(bstr .cbor SessionTranscript)`, the HKDF salt's input.
    public var taggedBytes: [UInt8] { CBORSplice.embedded(encodedBytes) }
}
