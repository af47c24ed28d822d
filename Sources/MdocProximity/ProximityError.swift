import CBOR
import Mdoc
import WalletCrypto

/// Everything that can go wrong in a proximity presentation, as values a UI or a log
/// can act on: one enum for the module's seam (STYLE.md), whose associated values are
/// enums and structs, never another error turned into text. An error from another
/// module (an ``MdocError`` from parsing or session encryption, a ``CryptoError``, the
/// document provider's own ``DocumentProviderError``) is carried as the value it was.
///
/// Status codes are those of ISO 18013-5 §9.1.1.5 (table 20); ``sessionStatus`` gives
/// the one the holder sends for a failure, where the standard defines one.
public enum ProximityError: Error, Equatable, Sendable {
    /// A frame or APDU on a carrier was malformed.
    case malformedFrame(FrameFailure)
    /// A message exceeded the size this side accepts.
    case messageTooLarge(size: Int, limit: Int)
    /// The carrier could not be opened, or broke while in use.
    case transportFailed(TransportFailure)
    /// The peer closed the connection.
    case connectionClosed
    /// Nothing arrived within the allowed time (a message, a connection, the document provider).
    case timeout(seconds: Double)
    /// An engagement (QR URI, NFC handover, ReaderEngagement) could not be used.
    case invalidEngagement(EngagementFailure)
    /// SessionEstablishment or SessionData did not decrypt, or the session keys could not
    /// be derived (status 10).
    case sessionEncryptionFailed(MdocError)
    /// A message was not the CBOR the protocol expects at this point (status 11).
    case invalidMessage(MessageFailure)
    /// The peer reported an error status (10 or 11) in SessionData, or a status Table 20
    /// does not define: any code other than 20, kept as received (a CBOR uint).
    case peerReportedError(status: UInt64)
    /// The operation is not allowed in the session's current state.
    case invalidState(StateFailure)
    /// The engagement is suspended and does not accept connections.
    case engagementSuspended
    /// The reader's authentication of a request did not verify against the configured anchors.
    case readerAuthenticationFailed(MdocError)
    /// The DeviceResponse did not verify (reader side).
    case responseVerificationFailed(MdocError)
    /// The response could not be built: the document provider failed, or building or
    /// signing it did (a signer's failure, such as the user cancelling a biometric
    /// prompt, is carried as the signer reported it).
    case responseCreationFailed(ResponseFailure)
    /// The peer ended the session (status 20) before the expected message.
    case sessionTerminated
    /// The session or wait was cancelled locally.
    case cancelled

    /// The SessionData status the holder sends when it ends a session for this error
    /// (ISO 18013-5 §9.1.1.5): 10 for session encryption, 11 for CBOR decoding; `nil`
    /// where the standard gives none.
    public var sessionStatus: SessionData.Status? {
        switch self {
        case .sessionEncryptionFailed: .sessionEncryptionError
        case .invalidMessage, .readerAuthenticationFailed: .cborDecodingError
        default: nil
        }
    }
}

/// Why a carrier frame (BLE value, APDU, NDEF message, BER-TLV object) was rejected.
public enum FrameFailure: Equatable, Sendable {
    /// The frame had `length` bytes where at least `minimum` are required.
    case tooShort(length: Int, minimum: Int)
    /// A BLE value began with a byte other than 0x00 / 0x01.
    case invalidContinuationByte(UInt8)
    /// A BLE State characteristic value other than start (0x01) / end (0x02).
    case invalidStateValue(UInt8)
    /// A fragment arrived after the message was complete, or outside a transfer.
    case unexpectedFragment
    /// A length field disagrees with the bytes present.
    case lengthMismatch(declared: Int, actual: Int)
    /// A length announced more than the allowed size.
    case declaredLengthTooLarge(declared: Int, limit: Int)
    /// An MTU / chunk size outside the carrier's range.
    case invalidMTU(Int)
    /// An APDU's P1-P2 were not the ones the command requires.
    case invalidParameters(p1: UInt8, p2: UInt8)
    /// An APDU's class byte is not allowed here.
    case invalidClass(UInt8)
    /// An extended-length APDU declared an Lc of 0.
    case zeroExtendedLc
    /// An expected response length (Le) outside 1...65,536.
    case invalidLe(Int)
    /// A response APDU carried this status word instead of success.
    case unexpectedStatus(UInt16)
    /// A BER-TLV object had this tag where another was required.
    case invalidTag(UInt8)
    /// A BER-TLV length byte that is not allowed here.
    case invalidBERLength(UInt8)
    /// An NDEF record used chunking, which is not supported.
    case chunkedNDEFRecord
    /// An NDEF message did not end with an ME record where its bytes end.
    case unterminatedNDEFMessage
    /// An L2CAP stream that is not a sequence of CBOR data items.
    case notCBOR(CBORError)
    /// A BLE characteristic value of the wrong length (Ident, L2CAP PSM).
    case invalidCharacteristicValue(BLECharacteristic)
}

/// Why a carrier could not be opened or used.
public enum TransportFailure: Equatable, Sendable {
    /// The connector cannot reach this kind of endpoint.
    case unsupportedEndpoint
    /// Nobody listens at the endpoint (in-memory exchange, simulated radio).
    case noListener
    /// The listener was closed.
    case listenerClosed
    /// A host that is not a numeric IPv4 address.
    case invalidAddress(String)
    /// A socket call failed with `errno`.
    case socket(SocketOperation, errno: Int32)
    /// The ephemeral session key could not be generated.
    case keyGeneration(CryptoError)
    /// The BLE link failed.
    case bluetooth(BLEFailure)
    /// The NFC link failed or the reader sent something the holder cannot serve.
    case nfc(NFCFailure)
}

/// The socket call a ``TransportFailure/socket(_:errno:)`` failure comes from.
public enum SocketOperation: String, Hashable, Sendable {
    /// `socket(2)`.
    case socket
    /// `connect(2)`.
    case connect
    /// `bind(2)` / `listen(2)`.
    case listen
    /// `accept(2)`.
    case accept
    /// `poll(2)`.
    case poll
    /// `recv(2)`.
    case receive
    /// `send(2)`.
    case send
}

/// Why a BLE link failed.
public enum BLEFailure: Hashable, Sendable {
    /// The peer's service lacks a characteristic the mode requires.
    case missingCharacteristic(BLECharacteristic)
    /// The reader's Ident characteristic does not match HKDF(EDeviceKeyBytes, "BLEIdent"):
    /// the mdoc connected to a reader other than the one that read its engagement.
    case identMismatch
    /// The platform's radio reported a failure (its own code).
    case radio(code: Int)
    /// The peer disconnected.
    case disconnected
    /// An input arrived that the GATT state machine does not expect in its state.
    case unexpectedEvent
}

/// Why the NFC entry point refused a command.
public enum NFCFailure: Hashable, Sendable {
    /// A SELECT for an application this mdoc does not serve.
    case unknownApplication([UInt8])
    /// A SELECT for a file this mdoc does not serve.
    case unknownFile(UInt16)
    /// A command before the application or file it needs was selected.
    case notSelected
    /// A READ BINARY beyond the end of the file.
    case readBeyondEnd(offset: Int, length: Int)
    /// An NDEF message the negotiated handover did not expect now.
    case unexpectedHandoverMessage
    /// A Service Select for a service other than connection handover.
    case unknownService(String)
    /// A Handover Request offering no carrier this mdoc supports.
    case noSupportedCarrier
    /// The field was lost (the platform reported deactivation).
    case deactivated
}

/// Why an engagement could not be used.
public enum EngagementFailure: Equatable, Sendable {
    /// A to-app engagement without the reader's engagement URI.
    case missingReaderEngagementURI
    /// A URI that is not `mdoc:` / `mdoc://` with base64url engagement bytes.
    case invalidURI
    /// The engagement structure did not parse.
    case unreadable(MdocError)
    /// None of the engagement's retrieval or connection methods can be used here.
    case noUsableConnectionMethod
    /// An NDEF message that is not a Handover Select.
    case notHandoverSelect
    /// A Handover Select without the `iso.org:18013:deviceengagement` record.
    case noDeviceEngagementRecord
    /// In reverse engagement, the SessionEstablishment's EReaderKey is not the key of
    /// the ReaderEngagement the holder scanned.
    case readerKeyMismatch
    /// The NFC handover failed.
    case handover(NFCFailure)
}

/// What was wrong with a message (status 11 where the holder answers it).
public enum MessageFailure: Equatable, Sendable {
    /// SessionEstablishment did not parse.
    case sessionEstablishment(MdocError)
    /// SessionData did not parse.
    case sessionData(MdocError)
    /// The decrypted DeviceRequest did not parse.
    case deviceRequest(MdocError)
    /// The decrypted DeviceResponse did not parse.
    case deviceResponse(MdocError)
    /// The reverse-engagement first message is not `{"deviceEngagementBytes": #6.24(bstr)}`.
    case deviceEngagementMessage
    /// The DeviceEngagement inside the reverse-engagement first message did not parse.
    case deviceEngagement(MdocError)
    /// Data arrived where the protocol expects none (a request while one waits for consent).
    case unexpectedData
}

/// Which rule of the session's state an operation broke.
public enum StateFailure: Hashable, Sendable {
    /// No request waits for the user's decision.
    case noRequestPending
    /// No response is expected now (none was accepted, or one was already sent).
    case noResponseExpected
    /// The request given is not the one the reader sent in this session (a response
    /// answers the pending request only).
    case requestMismatch
    /// The session has ended.
    case sessionEnded
    /// The reader has not engaged a holder yet.
    case notEngaged
    /// The reader already engaged; a reader serves one session.
    case alreadyEngaged
    /// `awaitHolder` without a reader engagement offered first.
    case noReaderEngagementOffered
}

/// Why the response could not be built.
public enum ResponseFailure: Equatable, Sendable {
    /// The document provider failed.
    case provider(DocumentProviderError)
    /// Building or signing the DeviceResponse failed.
    case building(MdocError)
}
