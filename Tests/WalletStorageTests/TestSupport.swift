import Foundation
import WalletCrypto
import WalletRuntime
@testable import WalletStorage

/// A fresh directory under the system temporary directory.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-storage-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A wrapping provider with a fixed key, so that databases written in one run (or the
/// committed fixture) can be read in another.
struct FixedKeyWrappingProvider: KeyWrappingProvider {
    let wrapper: AESKeyWrapper

    init(byte: UInt8 = 0x5A) {
        wrapper = AESKeyWrapper(key: SymmetricKey(bytes: [UInt8](repeating: byte, count: 32)))
    }

    func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] { try wrapper.wrap(plaintext, aad: aad) }
    func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        try wrapper.unwrap(wrapped, aad: aad)
    }
}

/// A fixed-key wrapping provider that counts its unwraps: how many times a key was decrypted.
final class CountingWrappingProvider: KeyWrappingProvider {
    private let inner = FixedKeyWrappingProvider()
    private let count = LockedBox(0)

    /// Unwraps so far.
    var unwrapCount: Int { count.withLock { $0 } }

    func wrap(_ plaintext: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] { try inner.wrap(plaintext, aad: aad) }
    func unwrap(_ wrapped: [UInt8], aad: [UInt8]) throws(StorageError) -> [UInt8] {
        count.withLock { $0 += 1 }
        return try inner.unwrap(wrapped, aad: aad)
    }
}

/// Cheap scrypt parameters so that per-key passphrase tests stay fast.
let testScrypt = try! ScryptParameters(n: 1 << 10, r: 8, p: 1)

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    var index = 0
    let last = haystack.count - needle.count
    while index <= last {
        if haystack[index] == first, Array(haystack[index..<(index + needle.count)]) == needle { return true }
        index += 1
    }
    return false
}

/// The deterministic credential the crash-safety child saves as number `number`.
func crashTestCredential(_ number: Int) -> StoredCredential {
    let id = "cred-\(number)"
    let instances = (0..<3).map { index in
        var raw: [UInt8] = []
        var block = HashAlgorithm.sha256.digest(Array("\(id)/\(index)".utf8))
        while raw.count < 3000 {
            raw += block
            block = HashAlgorithm.sha256.digest(block)
        }
        return CredentialInstance(index: index, keyAlias: "\(id)-key-\(index)", raw: raw)
    }
    return StoredCredential(
        id: id, format: number % 2 == 0 ? .sdJwtVc : .msoMdoc, type: number % 2 == 0 ? "urn:eudi:pid:1" : "org.iso.18013.5.1.mDL",
        issuer: IssuerInfo(identifier: "https://issuer.example", display: [DisplayMetadata(name: "Issuer \(number)")]),
        display: [DisplayMetadata(name: "Credential \(number)", locale: "en")], instances: instances,
        policy: CredentialPolicy(batchSize: 3, use: .oneTime), refreshToken: "refresh-\(number)")
}

/// Compares what matters of two credentials (timestamps are set by the store).
func sameContent(_ a: StoredCredential, _ b: StoredCredential) -> Bool {
    a.id == b.id && a.format == b.format && a.type == b.type && a.issuer == b.issuer && a.display == b.display
        && a.instances == b.instances && a.policy == b.policy && a.state == b.state && a.refreshToken == b.refreshToken
}
