/// Why a ``Signer`` or ``KeyAgreement`` could not use its key.
///
/// These are the outcomes a hardware-backed key produces (a Secure Enclave or StrongBox
/// key behind a biometric or passcode prompt) as well as plain failures. Every layer
/// that signs (JOSE, COSE, SD-JWT, mdoc, the protocol sessions) carries this value
/// unchanged, so an app can tell "the user cancelled the prompt" from "the signature
/// failed" wherever the signing was started.
public enum KeyOperationError: Error, Equatable, Sendable {
    /// The user dismissed the authentication prompt the key required.
    case userCancelled
    /// The key requires user authentication (a passcode, biometrics, a passphrase) that
    /// was not supplied, was wrong, or has expired.
    case authenticationRequired
    /// The key can no longer be used: it was invalidated (enrolled biometrics changed,
    /// the device passcode was removed) or deleted.
    case keyInvalidated
    /// The key does not support the operation (key agreement with a signing-only key).
    case unsupportedOperation
    /// The cryptographic primitive failed.
    case crypto(CryptoError)
    /// A platform key store failed with its own code (e.g. an `OSStatus` in domain
    /// `"OSStatus"`), for errors none of the cases above describes.
    case platform(domain: String, code: Int)
}
