import Foundation
import WalletCrypto

/// The kind of key a secure area creates.
public enum KeyAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// ECDSA/ECDH on NIST P-256 (ES256): the default for SD-JWT VC and mdoc holder keys.
    case p256 = "EC-P-256"
    /// ECDSA/ECDH on NIST P-384 (ES384).
    case p384 = "EC-P-384"
    /// ECDSA/ECDH on NIST P-521 (ES512).
    case p521 = "EC-P-521"
    /// EdDSA on Ed25519 (signing only, no key agreement).
    case ed25519 = "Ed25519"

    /// The curve of an EC algorithm, nil for Ed25519.
    public var curve: ECCurve? {
        switch self {
        case .p256: .p256
        case .p384: .p384
        case .p521: .p521
        case .ed25519: nil
        }
    }

    /// The signature algorithm the key signs with.
    public var signatureAlgorithm: SignatureAlgorithm {
        switch self {
        case .p256: .es256
        case .p384: .es384
        case .p521: .es512
        case .ed25519: .edDSA
        }
    }
}

/// How to create a key.
public struct KeyCreationOptions: Sendable, Equatable {
    /// The key algorithm (default P-256).
    public var algorithm: KeyAlgorithm
    /// When set, the secure area attests the new key with this value as the key
    /// attestation's `nonce` (OpenID4VCI 1.0 Appendix D; typically the issuer's c_nonce).
    public var attestationChallenge: String?
    /// When set, the key is additionally encrypted under this passphrase (a second
    /// layer); every later use of the key must supply it.
    public var passphrase: String?

    /// Options with every field explicit; defaults give an unprotected P-256 key.
    public init(algorithm: KeyAlgorithm = .p256, attestationChallenge: String? = nil, passphrase: String? = nil) {
        self.algorithm = algorithm
        self.attestationChallenge = attestationChallenge
        self.passphrase = passphrase
    }
}

/// What a secure area tells about one of its keys: public facts only.
public struct KeyInfo: Sendable, Equatable {
    /// The key's alias (unique within its secure area).
    public let alias: String
    /// The key's algorithm.
    public let algorithm: KeyAlgorithm
    /// The public key.
    public let publicKey: PublicKey
    /// When the key was created.
    public let createdAt: Date
    /// Whether each use needs the key's own passphrase.
    public let isPassphraseProtected: Bool
    /// The key attestation made at creation when a challenge was given (compact JWT).
    public let attestation: String?

    /// Groups the facts about a key.
    public init(alias: String, algorithm: KeyAlgorithm, publicKey: PublicKey, createdAt: Date,
                isPassphraseProtected: Bool, attestation: String?) {
        self.alias = alias
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.isPassphraseProtected = isPassphraseProtected
        self.attestation = attestation
    }
}

/// A place where holder private keys are created and used without ever leaving it.
///
/// This protocol is the seam between the wallet and its key hardware: the formats sign
/// through `Signer` and agree keys through `KeyAgreement`, so `SoftwareSecureArea`
/// (Linux, tests), a Secure Enclave area or an Android StrongBox area are interchangeable.
/// No requirement returns private key material.
public protocol SecureArea: Sendable {
    /// A short name for the implementation (stored with credentials, shown in logs).
    var name: String { get }
    /// Creates a key under `alias` (which must not exist yet).
    func createKey(alias: String, options: KeyCreationOptions) async throws(StorageError) -> KeyInfo
    /// The public facts about the key `alias`.
    func keyInfo(alias: String) async throws(StorageError) -> KeyInfo
    /// A signer for the key `alias`; `passphrase` unlocks a passphrase-protected key.
    func signer(for alias: String, passphrase: String?) async throws(StorageError) -> any Signer
    /// An ECDH key agreement for the EC key `alias`.
    func keyAgreement(for alias: String, passphrase: String?) async throws(StorageError) -> any KeyAgreement
    /// A key attestation (OpenID4VCI 1.0 Appendix D) covering the keys `aliases`, with
    /// `nonce` when given.
    func keyAttestation(for aliases: [String], nonce: String?) async throws(StorageError) -> KeyAttestation
    /// Deletes the key `alias` (throws `keyNotFound` when absent).
    func deleteKey(alias: String) async throws(StorageError)
    /// Every key in the area, ordered by alias.
    func listKeys() async throws(StorageError) -> [KeyInfo]
}

extension SecureArea {
    /// Creates an unprotected P-256 key without attestation.
    public func createKey(alias: String) async throws(StorageError) -> KeyInfo {
        try await createKey(alias: alias, options: KeyCreationOptions())
    }

    /// The public key of `alias`.
    public func publicKey(alias: String) async throws(StorageError) -> PublicKey {
        try await keyInfo(alias: alias).publicKey
    }

    /// A signer for an unprotected key.
    public func signer(for alias: String) async throws(StorageError) -> any Signer {
        try await signer(for: alias, passphrase: nil)
    }

    /// A key agreement for an unprotected key.
    public func keyAgreement(for alias: String) async throws(StorageError) -> any KeyAgreement {
        try await keyAgreement(for: alias, passphrase: nil)
    }
}
