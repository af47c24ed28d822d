/// The JWE `enc` values this module implements (RFC 7518 §5.3).
public enum ContentEncryptionAlgorithm: String, Sendable, CaseIterable, Hashable {
    /// AES-128-GCM.
    case a128gcm = "A128GCM"
    /// AES-192-GCM.
    case a192gcm = "A192GCM"
    /// AES-256-GCM.
    case a256gcm = "A256GCM"

    /// The content-encryption key length in bytes.
    public var keyByteCount: Int {
        switch self {
        case .a128gcm: 16
        case .a192gcm: 24
        case .a256gcm: 32
        }
    }
}
