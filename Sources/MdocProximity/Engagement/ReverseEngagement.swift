import CBOR
import Mdoc

/// Reverse engagement (ISO/IEC 18013-7, and the second edition of 18013-5): the
/// holder scans the reader's ReaderEngagement, connects to one of its connection
/// methods, and sends its DeviceEngagement as the first message; the reader then sends
/// SessionEstablishment with the key of its ReaderEngagement.
///
/// The SDK's reading of the framing, where the published texts leave room:
/// - the reader's code is `mdoc:` + base64url(ReaderEngagement) (`mdoc://` is accepted
///   too); its structure is read with the same rules as DeviceEngagement and unknown
///   keys are ignored, so standard readers' engagements parse;
/// - the first message is `{"deviceEngagementBytes": #6.24(bstr .cbor DeviceEngagement)}`
///   (18013-7's DeviceEngagement message), sent on the carrier like any other message;
/// - the SessionTranscript's handover is `ReaderEngagementBytes`, the tag-24 item of
///   the ReaderEngagement exactly as scanned (``Handover/reverseEngagement(readerEngagementEncoded:)``);
/// - SessionEstablishment must carry the EReaderKey of the scanned ReaderEngagement;
///   the holder refuses any other key (status 10).
public enum ReverseEngagement {
    /// Parses a reader's engagement URI.
    public static func readerEngagement(uri: String) throws(ProximityError) -> ReaderEngagement {
        do { return try ReaderEngagement(uri: uri) } catch {
            throw error == .invalidEngagementURI ? .invalidEngagement(.invalidURI) : .invalidEngagement(.unreadable(error))
        }
    }

    /// The holder's first message: `{"deviceEngagementBytes": #6.24(bstr)}`.
    public static func deviceEngagementMessage(_ engagement: DeviceEngagement) -> [UInt8] {
        CBOR.map(["deviceEngagementBytes": CBOR.embedded(encodedBytes: engagement.encodedBytes)]).encoded()
    }

    /// Reads the holder's first message.
    public static func parseDeviceEngagementMessage(_ bytes: [UInt8]) throws(ProximityError) -> DeviceEngagement {
        guard let item = try? CBOR.decodeItem(bytes), let tagged = item["deviceEngagementBytes"],
              tagged.tag == 24, let content = tagged.content?.value.bytesValue else {
            throw .invalidMessage(.deviceEngagementMessage)
        }
        do { return try DeviceEngagement(encoded: content) } catch { throw .invalidMessage(.deviceEngagement(error)) }
    }

    /// The handover of a reverse-engaged session.
    public static func handover(for engagement: ReaderEngagement) -> Handover {
        .reverseEngagement(readerEngagementEncoded: engagement.encodedBytes)
    }
}
