/// Everything that can go wrong in a proximity presentation, in words a UI or a
/// log can act on. One enum for the module (STYLE.md); the status codes are those
/// of ISO 18013-5 §8.3.2.1.2.3 (table 20).
public enum ProximityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A frame or APDU on a carrier was malformed.
    case malformedFrame(FrameFailure)
    /// A message exceeded the size this side accepts.
    case messageTooLarge(size: Int, limit: Int)
    /// The transport could not be opened, or broke while in use.
    case transportFailed(String)
    /// The peer closed the connection.
    case connectionClosed
    /// Nothing arrived within the allowed time.
    case timeout(seconds: Double)
    /// An engagement (QR URI, NFC handover, ReaderEngagement) could not be used.
    case invalidEngagement(String)
    /// SessionEstablishment or SessionData could not be decoded (status 10).
    case sessionEncryptionFailed(String)
    /// A decrypted message was not valid CBOR of the expected shape (status 11).
    case invalidMessage(String)
    /// The peer reported an error status in SessionData.
    case peerReportedError(status: Int)
    /// The operation is not allowed in the session's current state.
    case invalidState(String)
    /// The engagement is suspended and does not accept connections.
    case engagementSuspended
    /// The DeviceResponse did not verify (reader side).
    case responseVerificationFailed(String)
    /// The document provider could not build a response.
    case responseCreationFailed(String)
    /// The peer ended the session (status 20) before the expected message.
    case sessionTerminated
    /// The session was cancelled locally.
    case cancelled

    /// A short human-readable description (no secrets, no payload bytes).
    public var description: String {
        switch self {
        case .malformedFrame(let failure): return "malformed frame: \(failure)"
        case .messageTooLarge(let size, let limit): return "message of \(size) bytes exceeds the limit of \(limit)"
        case .transportFailed(let reason): return "transport failed: \(reason)"
        case .connectionClosed: return "connection closed by the peer"
        case .timeout(let seconds): return "timed out after \(seconds) s"
        case .invalidEngagement(let reason): return "invalid engagement: \(reason)"
        case .sessionEncryptionFailed(let reason): return "session encryption error: \(reason)"
        case .invalidMessage(let reason): return "invalid message: \(reason)"
        case .peerReportedError(let status): return "peer reported status \(status)"
        case .invalidState(let reason): return "invalid state: \(reason)"
        case .engagementSuspended: return "engagement is suspended"
        case .responseVerificationFailed(let reason): return "response verification failed: \(reason)"
        case .responseCreationFailed(let reason): return "response creation failed: \(reason)"
        case .sessionTerminated: return "the peer ended the session"
        case .cancelled: return "cancelled"
        }
    }
}

/// Why a carrier frame was rejected.
public enum FrameFailure: Hashable, Sendable, CustomStringConvertible {
    /// The frame was empty where at least `minimum` bytes are required.
    case tooShort(length: Int, minimum: Int)
    /// A BLE fragment began with a byte other than 0x00 / 0x01.
    case invalidContinuationByte(UInt8)
    /// A BLE state characteristic value other than start (0x01) / end (0x02).
    case invalidStateValue(UInt8)
    /// A fragment arrived after the message was complete.
    case unexpectedFragment
    /// An APDU's class, instruction or parameters were not the expected ones.
    case invalidHeader(String)
    /// An APDU's length fields disagree with its size.
    case lengthMismatch(declared: Int, actual: Int)
    /// A length prefix announced more than the allowed size.
    case declaredLengthTooLarge(declared: Int, limit: Int)
    /// An MTU / chunk size outside the carrier's range.
    case invalidMTU(Int)

    /// A short description.
    public var description: String {
        switch self {
        case .tooShort(let length, let minimum): return "\(length) bytes, at least \(minimum) needed"
        case .invalidContinuationByte(let byte): return "continuation byte 0x\(String(byte, radix: 16))"
        case .invalidStateValue(let byte): return "state value 0x\(String(byte, radix: 16))"
        case .unexpectedFragment: return "fragment after the last one"
        case .invalidHeader(let what): return "invalid header: \(what)"
        case .lengthMismatch(let declared, let actual): return "declared \(declared) bytes, found \(actual)"
        case .declaredLengthTooLarge(let declared, let limit): return "declared \(declared) bytes, limit \(limit)"
        case .invalidMTU(let mtu): return "MTU \(mtu) out of range"
        }
    }
}
