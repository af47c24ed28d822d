import Foundation

/// The module's strings table (`Resources/en.lproj/Localizable.strings`): every label
/// and message a UI may show is looked up by key, with the English text as the
/// fallback, so an app can add translations by shipping its own tables.
enum ProximityStrings {
    static func text(_ key: String, _ english: String) -> String {
        Bundle.module.localizedString(forKey: key, value: english, table: "Localizable")
    }
}

extension ProximityError: LocalizedError {
    /// A sentence fit to show a user (localized; English by default). It names what
    /// went wrong, never key material or message bytes.
    public var errorDescription: String? { localizedMessage }

    var localizedMessage: String {
        switch self {
        case .malformedFrame:
            return ProximityStrings.text("error.malformedFrame", "The reader sent data that could not be read.")
        case .messageTooLarge:
            return ProximityStrings.text("error.messageTooLarge", "A message was larger than allowed.")
        case .transportFailed(let failure):
            switch failure {
            case .bluetooth(.identMismatch):
                return ProximityStrings.text("error.identMismatch", "Connected to a different reader than the one that scanned the code.")
            case .bluetooth:
                return ProximityStrings.text("error.bluetooth", "The Bluetooth connection failed.")
            case .nfc:
                return ProximityStrings.text("error.nfc", "The NFC connection failed.")
            default:
                return ProximityStrings.text("error.transportFailed", "The connection to the reader failed.")
            }
        case .connectionClosed:
            return ProximityStrings.text("error.connectionClosed", "The reader closed the connection.")
        case .timeout:
            return ProximityStrings.text("error.timeout", "The reader did not respond in time.")
        case .invalidEngagement:
            return ProximityStrings.text("error.invalidEngagement", "The code or tag could not be used to connect.")
        case .sessionEncryptionFailed:
            return ProximityStrings.text("error.sessionEncryptionFailed", "The secure session with the reader could not be set up.")
        case .invalidMessage:
            return ProximityStrings.text("error.invalidMessage", "The reader sent a request that could not be read.")
        case .peerReportedError:
            return ProximityStrings.text("error.peerReportedError", "The reader reported an error.")
        case .invalidState:
            return ProximityStrings.text("error.invalidState", "This action is not possible at this point of the session.")
        case .engagementSuspended:
            return ProximityStrings.text("error.engagementSuspended", "Sharing is paused while another session is active.")
        case .readerAuthenticationFailed:
            return ProximityStrings.text("error.readerAuthenticationFailed", "The reader could not be verified.")
        case .responseVerificationFailed:
            return ProximityStrings.text("error.responseVerificationFailed", "The document could not be verified.")
        case .responseCreationFailed(let failure):
            if case .provider(.userCancelled) = failure {
                return ProximityStrings.text("error.userCancelled", "Sharing was cancelled.")
            }
            return ProximityStrings.text("error.responseCreationFailed", "The documents could not be prepared for sharing.")
        case .sessionTerminated:
            return ProximityStrings.text("error.sessionTerminated", "The reader ended the session.")
        case .cancelled:
            return ProximityStrings.text("error.cancelled", "The session was canceled.")
        }
    }
}
