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

/// How use of a key is gated.
public enum KeyProtection: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// No gate beyond the area's own protection of its keys.
    case none
    /// A passphrase of the key's own, needed on every use (``PassphraseUnlock``). The
    /// software area supports it; hardware areas use ``userAuthentication(validity:)``.
    case passphrase(String)
    /// The platform's user authentication (device passcode or biometrics), valid for
    /// `validity` after a successful prompt, or on every use when nil. Hardware areas
    /// support it; the software area refuses it with `unsupportedKeyProtection`.
    case userAuthentication(validity: Duration?)

    /// A kind of protection, without its parameters (never a passphrase).
    public enum Kind: String, Hashable, Sendable {
        /// ``KeyProtection/none``.
        case none
        /// ``KeyProtection/passphrase(_:)``.
        case passphrase
        /// ``KeyProtection/userAuthentication(validity:)``.
        case userAuthentication
    }

    /// The kind of this protection.
    public var kind: Kind {
        switch self {
        case .none: .none
        case .passphrase: .passphrase
        case .userAuthentication: .userAuthentication
        }
    }

    /// The kind of protection, never the passphrase.
    public var description: String {
        switch self {
        case .none: "none"
        case .passphrase: "passphrase(<redacted>)"
        case .userAuthentication(let validity): "userAuthentication(\(validity.map { "\($0)" } ?? "every use"))"
        }
    }

    /// Same as ``description``: never the passphrase.
    public var debugDescription: String { description }

    /// The kind only, so that `dump` cannot print a passphrase.
    public var customMirror: Mirror { Mirror(self, children: ["kind": kind], displayStyle: .enum) }
}

/// How to create a key.
public struct KeyCreationOptions: Sendable, Equatable {
    /// The key algorithm (default P-256).
    public var algorithm: KeyAlgorithm
    /// How use of the key is gated (default: not beyond the area's own protection).
    public var protection: KeyProtection

    /// Options; defaults give an unprotected P-256 key.
    public init(algorithm: KeyAlgorithm = .p256, protection: KeyProtection = .none) {
        self.algorithm = algorithm
        self.protection = protection
    }
}

/// What unlocks a protected key for use: each secure area defines its own kinds (a
/// passphrase for the software area; an authentication context such as an
/// `LAContext` that has already evaluated a policy, for a Secure Enclave area).
/// An area that receives a kind it does not know fails with `authenticationRequired`.
public protocol KeyUnlockData: Sendable {}

/// Unlocks a key created with ``KeyProtection/passphrase(_:)``. Prints nothing of the passphrase.
public struct PassphraseUnlock: KeyUnlockData, CustomStringConvertible, CustomReflectable {
    /// The passphrase.
    public let passphrase: String

    /// Unlock data carrying `passphrase`.
    public init(_ passphrase: String) { self.passphrase = passphrase }

    /// Never the passphrase.
    public var description: String { "PassphraseUnlock(<redacted>)" }
    /// A mirror without children, so `dump` cannot print the passphrase.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
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
    /// Whether each use needs unlock data or a user authentication.
    public let requiresUnlock: Bool

    /// Groups the facts about a key.
    public init(alias: String, algorithm: KeyAlgorithm, publicKey: PublicKey, createdAt: Date, requiresUnlock: Bool) {
        self.alias = alias
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.requiresUnlock = requiresUnlock
    }
}

/// A place where holder private keys are created and used without ever leaving it.
///
/// This protocol is the seam between the wallet and its key hardware: the formats sign
/// through `Signer` and agree keys through `KeyAgreement`, so `SoftwareSecureArea`
/// (Linux, tests), a Secure Enclave area or an Android StrongBox area are interchangeable.
/// No requirement returns private key material. Key attestations (OpenID4VCI 1.0
/// Appendix D) are made above this layer, by the issuance module, from the public keys
/// and whatever evidence the platform gives.
///
/// Errors a user-facing area produces: `StorageError.userCancelled` (the prompt was
/// dismissed), `.authenticationRequired` (no or wrong unlock data), `.keyInvalidated`
/// (the key can no longer be used). A signer obtained from an area reports the same
/// conditions at signing time as `KeyOperationError`.
public protocol SecureArea: Sendable {
    /// A short name for the implementation (stored with credentials, shown in logs).
    var name: String { get }
    /// Creates a key under `alias` (which must not exist yet).
    func createKey(alias: String, options: KeyCreationOptions) async throws(StorageError) -> KeyInfo
    /// Creates `count` keys with fresh aliases beginning with `aliasPrefix`, all or none:
    /// when one fails, those already created are deleted. What batch issuance needs.
    func createKeys(count: Int, aliasPrefix: String, options: KeyCreationOptions) async throws(StorageError) -> [KeyInfo]
    /// The public facts about the key `alias`.
    func keyInfo(alias: String) async throws(StorageError) -> KeyInfo
    /// A signer for the key `alias`; `unlock` unlocks a protected key.
    func signer(for alias: String, unlock: (any KeyUnlockData)?) async throws(StorageError) -> any Signer
    /// An ECDH key agreement for the EC key `alias`.
    func keyAgreement(for alias: String, unlock: (any KeyUnlockData)?) async throws(StorageError) -> any KeyAgreement
    /// The signer and, for an EC key, the key agreement of `alias`, from one unlock: what
    /// handing out a credential instance needs (a signature, or ECDH for mdoc MAC
    /// authentication), with one passphrase derivation or one user prompt rather than
    /// one per operation. The extension's default asks `signer(for:unlock:)` and then
    /// `keyAgreement(for:unlock:)`; areas that can do both from one unlock implement it.
    func unlockedKey(alias: String, unlock: (any KeyUnlockData)?) async throws(StorageError) -> UnlockedKey
    /// Deletes the key `alias` (throws `keyNotFound` when absent).
    func deleteKey(alias: String) async throws(StorageError)
    /// Every key in the area, ordered by alias.
    func listKeys() async throws(StorageError) -> [KeyInfo]
}

/// The operations of one key after one unlock (``SecureArea/unlockedKey(alias:unlock:)``).
public struct UnlockedKey: Sendable {
    /// Signs with the key.
    public let signer: any Signer
    /// ECDH with the key; nil for a key that cannot agree keys (Ed25519).
    public let keyAgreement: (any KeyAgreement)?

    /// Groups a key's signer and key agreement.
    public init(signer: any Signer, keyAgreement: (any KeyAgreement)?) {
        self.signer = signer
        self.keyAgreement = keyAgreement
    }
}

extension SecureArea {
    /// The signer, then (for an EC key) the key agreement, each unlocked on its own: the
    /// default for areas that cannot share one unlock between them.
    public func unlockedKey(alias: String, unlock: (any KeyUnlockData)?) async throws(StorageError) -> UnlockedKey {
        let signer = try await signer(for: alias, unlock: unlock)
        guard case .ec = signer.publicKey else { return UnlockedKey(signer: signer, keyAgreement: nil) }
        return UnlockedKey(signer: signer, keyAgreement: try await keyAgreement(for: alias, unlock: unlock))
    }

    /// Creates an unprotected P-256 key.
    public func createKey(alias: String) async throws(StorageError) -> KeyInfo {
        try await createKey(alias: alias, options: KeyCreationOptions())
    }

    /// Creates `count` keys with aliases `key-<uuid>`; see the requirement.
    public func createKeys(count: Int, options: KeyCreationOptions = KeyCreationOptions()) async throws(StorageError) -> [KeyInfo] {
        try await createKeys(count: count, aliasPrefix: "key", options: options)
    }

    /// Creates keys one by one with random aliases, deleting what was created when one
    /// fails. Areas that can create keys in one transaction implement it themselves.
    public func createKeys(count: Int, aliasPrefix: String, options: KeyCreationOptions) async throws(StorageError) -> [KeyInfo] {
        guard count > 0 else { throw .invalidBatchSize(count) }
        var created: [KeyInfo] = []
        do {
            for _ in 0..<count {
                created.append(try await createKey(alias: "\(aliasPrefix)-\(SystemRandom().uuid().uuidString.lowercased())", options: options))
            }
        } catch {
            for info in created { try? await deleteKey(alias: info.alias) }
            throw error
        }
        return created
    }

    /// Deletes every key in `aliases` that exists; returns the first failure other than
    /// `keyNotFound` after trying them all.
    public func deleteKeys(aliases: [String]) async throws(StorageError) {
        var firstError: StorageError?
        for alias in aliases {
            do { try await deleteKey(alias: alias) } catch .keyNotFound {} catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    /// The public key of `alias`.
    public func publicKey(alias: String) async throws(StorageError) -> PublicKey {
        try await keyInfo(alias: alias).publicKey
    }

    /// A signer for an unprotected key.
    public func signer(for alias: String) async throws(StorageError) -> any Signer {
        try await signer(for: alias, unlock: nil)
    }

    /// A key agreement for an unprotected key.
    public func keyAgreement(for alias: String) async throws(StorageError) -> any KeyAgreement {
        try await keyAgreement(for: alias, unlock: nil)
    }
}
