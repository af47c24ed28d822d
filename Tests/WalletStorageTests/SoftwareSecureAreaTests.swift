import CSQLite
import Foundation
import TestChildProcess
import TestSecureAreas
import Testing
import WalletCrypto
import WalletRuntime
@testable import WalletStorage
import WalletEncoding

@Suite("SoftwareSecureArea")
struct SoftwareSecureAreaTests {
    private func inMemoryArea() throws -> SoftwareSecureArea {
        try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider(), perKeyScrypt: testScrypt)
    }

    @Test("a created key signs messages that verify with its public key, for every algorithm")
    func signsWithEveryAlgorithm() async throws {
        let area = try inMemoryArea()
        let message = Array("holder binding".utf8)
        for algorithm in KeyAlgorithm.allCases {
            let info = try await area.createKey(alias: "k-\(algorithm.rawValue)", options: KeyCreationOptions(algorithm: algorithm))
            let signer = try await area.signer(for: info.alias)
            #expect(signer.algorithm == algorithm.signatureAlgorithm)
            #expect(signer.publicKey == info.publicKey)
            let signature = try await signer.sign(message)
            #expect(info.publicKey.verify(signature: signature, for: message, algorithm: algorithm.signatureAlgorithm))
            #expect(!info.publicKey.verify(signature: signature, for: message + [0], algorithm: algorithm.signatureAlgorithm))
        }
        #expect(try await area.listKeys().map(\.alias) == KeyAlgorithm.allCases.map { "k-\($0.rawValue)" }.sorted())
    }

    @Test("key agreement gives the same secret as the peer computes, and is refused for Ed25519")
    func keyAgreement() async throws {
        let area = try inMemoryArea()
        _ = try await area.createKey(alias: "ecdh")
        let agreement = try await area.keyAgreement(for: "ecdh")
        let peer = try ECPrivateKey.generate(curve: .p256)
        let ours = try await agreement.sharedSecret(with: peer.publicKey)
        #expect(ours == (try peer.sharedSecret(with: agreement.publicKey)))
        _ = try await area.createKey(alias: "ed", options: KeyCreationOptions(algorithm: .ed25519))
        await #expect(throws: StorageError.unsupportedKeyOperation(alias: "ed", operation: .keyAgreement)) {
            _ = try await area.keyAgreement(for: "ed")
        }
    }

    @Test("aliases are unique, unknown aliases are reported, deleted keys are gone")
    func aliasLifecycle() async throws {
        let area = try inMemoryArea()
        _ = try await area.createKey(alias: "a")
        await #expect(throws: StorageError.keyAlreadyExists(alias: "a")) { _ = try await area.createKey(alias: "a") }
        await #expect(throws: StorageError.keyNotFound(alias: "b")) { _ = try await area.signer(for: "b") }
        await #expect(throws: StorageError.self) { _ = try await area.createKey(alias: "") }
        try await area.deleteKey(alias: "a")
        await #expect(throws: StorageError.keyNotFound(alias: "a")) { _ = try await area.keyInfo(alias: "a") }
        await #expect(throws: StorageError.keyNotFound(alias: "a")) { try await area.deleteKey(alias: "a") }
        #expect(try await area.listKeys().isEmpty)
    }

    @Test("a batch of keys is created in one transaction with distinct aliases; platform authentication is refused")
    func batchCreation() async throws {
        let area = try inMemoryArea()
        let infos = try await area.createKeys(count: 5, aliasPrefix: "batch", options: KeyCreationOptions())
        #expect(Set(infos.map(\.alias)).count == 5)
        #expect(infos.allSatisfy { $0.alias.hasPrefix("batch-") })
        #expect(Set(try infos.map { try $0.publicKey.spkiDER }).count == 5)
        #expect(try await area.listKeys().count == 5)
        for info in infos {
            let signature = try await area.signer(for: info.alias).sign([7])
            #expect(info.publicKey.verify(signature: signature, for: [7], algorithm: .es256))
        }
        await #expect(throws: StorageError.invalidBatchSize(0)) {
            _ = try await area.createKeys(count: 0, aliasPrefix: "none", options: KeyCreationOptions())
        }
        await #expect(throws: StorageError.unsupportedKeyProtection(.userAuthentication)) {
            _ = try await area.createKeys(count: 2, aliasPrefix: "ua", options: KeyCreationOptions(protection: .userAuthentication(validity: nil)))
        }
        #expect(try await area.listKeys().count == 5)
    }

    @Test("a per-key passphrase is required, and a wrong one does not unwrap the key")
    func perKeyPassphrase() async throws {
        let area = try inMemoryArea()
        let info = try await area.createKey(alias: "p", options: KeyCreationOptions(protection: .passphrase("correct horse")))
        #expect(info.requiresUnlock)
        await #expect(throws: StorageError.authenticationRequired(alias: "p")) { _ = try await area.signer(for: "p") }
        await #expect(throws: StorageError.authenticationRequired(alias: "p")) {
            _ = try await area.signer(for: "p", unlock: PassphraseUnlock("wrong horse"))
        }
        struct OtherUnlock: KeyUnlockData {}
        await #expect(throws: StorageError.authenticationRequired(alias: "p")) {
            _ = try await area.signer(for: "p", unlock: OtherUnlock())
        }
        #expect("\(PassphraseUnlock("correct horse"))" == "PassphraseUnlock(<redacted>)")
        let signer = try await area.signer(for: "p", unlock: PassphraseUnlock("correct horse"))
        let signature = try await signer.sign([1, 2, 3])
        #expect(info.publicKey.verify(signature: signature, for: [1, 2, 3], algorithm: .es256))
    }

    @Test("unlockedKey decrypts a key once for its signer and its key agreement; Ed25519 has no agreement; same errors as signer(for:)")
    func unlockedKeyDecryptsOnce() async throws {
        let wrapping = CountingWrappingProvider()
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: wrapping, perKeyScrypt: testScrypt)
        let info = try await area.createKey(alias: "p", options: KeyCreationOptions(protection: .passphrase("pin 1234")))
        let before = wrapping.unwrapCount
        let key = try await area.unlockedKey(alias: "p", unlock: PassphraseUnlock("pin 1234"))
        #expect(wrapping.unwrapCount == before + 1)
        #expect(key.signer.publicKey == info.publicKey)
        let signature = try await key.signer.sign([4, 5, 6])
        #expect(info.publicKey.verify(signature: signature, for: [4, 5, 6], algorithm: .es256))
        let agreement = try #require(key.keyAgreement)
        #expect(PublicKey.ec(agreement.publicKey) == info.publicKey)
        let peer = try ECPrivateKey.generate(curve: .p256)
        #expect(try await agreement.sharedSecret(with: peer.publicKey) == (try peer.sharedSecret(with: agreement.publicKey)))
        // signer(for:) and keyAgreement(for:) decrypt once each.
        _ = try await area.signer(for: "p", unlock: PassphraseUnlock("pin 1234"))
        _ = try await area.keyAgreement(for: "p", unlock: PassphraseUnlock("pin 1234"))
        #expect(wrapping.unwrapCount == before + 3)

        let ed = try await area.createKey(alias: "ed", options: KeyCreationOptions(algorithm: .ed25519))
        let edKey = try await area.unlockedKey(alias: "ed", unlock: nil)
        #expect(edKey.keyAgreement == nil)
        let edSignature = try await edKey.signer.sign([7])
        #expect(ed.publicKey.verify(signature: edSignature, for: [7], algorithm: .edDSA))

        await #expect(throws: StorageError.authenticationRequired(alias: "p")) { _ = try await area.unlockedKey(alias: "p", unlock: nil) }
        await #expect(throws: StorageError.authenticationRequired(alias: "p")) {
            _ = try await area.unlockedKey(alias: "p", unlock: PassphraseUnlock("pin 4321"))
        }
        await #expect(throws: StorageError.keyNotFound(alias: "absent")) { _ = try await area.unlockedKey(alias: "absent", unlock: nil) }
    }

    @Test("the protocol's default unlockedKey asks for the signer, then the agreement of an EC key only")
    func unlockedKeyDefault() async throws {
        let area = try inMemoryArea()
        let log = LockedBox<[String]>([])
        let recording = ForwardingSecureArea(inner: area, name: "recording", signer: { alias, unlock throws(StorageError) in
            log.withLock { $0.append("signer \(alias)") }
            return try await area.signer(for: alias, unlock: unlock)
        }, keyAgreement: { alias, unlock throws(StorageError) in
            log.withLock { $0.append("keyAgreement \(alias)") }
            return try await area.keyAgreement(for: alias, unlock: unlock)
        })
        let ec = try await area.createKey(alias: "ec")
        let key = try await recording.unlockedKey(alias: "ec", unlock: nil)
        #expect(log.withLock { $0 } == ["signer ec", "keyAgreement ec"])
        #expect(key.signer.publicKey == ec.publicKey && key.keyAgreement.map { PublicKey.ec($0.publicKey) } == ec.publicKey)
        _ = try await area.createKey(alias: "ed", options: KeyCreationOptions(algorithm: .ed25519))
        #expect(try await recording.unlockedKey(alias: "ed", unlock: nil).keyAgreement == nil)
        #expect(log.withLock { $0 } == ["signer ec", "keyAgreement ec", "signer ed"])
        await #expect(throws: StorageError.keyNotFound(alias: "absent")) { _ = try await recording.unlockedKey(alias: "absent", unlock: nil) }
    }

    @Test("a wrapped key moved to another alias or altered in the database does not unwrap")
    func aadBindsAliasAndTamperingIsDetected() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("keys.sqlite")
        let wrapping = FixedKeyWrappingProvider()
        let area = try SoftwareSecureArea(location: .file(url), wrapping: wrapping)
        _ = try await area.createKey(alias: "one")
        _ = try await area.createKey(alias: "two")
        await area.close()
        let connection = try SQLiteConnection(location: .file(url))
        // Give "two" the wrapped private key of "one" (with one's public key too).
        try connection.run(
            """
            UPDATE secure_area_keys SET wrapped_key = (SELECT wrapped_key FROM secure_area_keys WHERE alias = 'one'),
            public_key = (SELECT public_key FROM secure_area_keys WHERE alias = 'one') WHERE alias = 'two'
            """)
        // Flip one bit of "one"'s ciphertext.
        let wrapped = try #require(try connection.query("SELECT wrapped_key FROM secure_area_keys WHERE alias = 'one'").first?.first?.bytes)
        var flipped = wrapped
        flipped[20] ^= 1
        try connection.run("UPDATE secure_area_keys SET wrapped_key = ? WHERE alias = 'one'", [.blob(flipped)])
        connection.close()
        let reopened = try SoftwareSecureArea(location: .file(url), wrapping: wrapping)
        await #expect(throws: StorageError.unwrapFailed) { _ = try await reopened.signer(for: "two") }
        await #expect(throws: StorageError.unwrapFailed) { _ = try await reopened.signer(for: "one") }
    }

    @Test("the key file is created 0600 and a group-readable key file is refused")
    func keyFilePermissions() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("keys.sqlite")
        let provider = try KeyFileWrappingProvider(nextTo: database)
        let attributes = try FileManager.default.attributesOfItem(atPath: provider.fileURL.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 32)
        // Reopening reads the same key: what one wrapped, the other unwraps.
        let again = try KeyFileWrappingProvider(nextTo: database)
        let wrapped = try provider.wrap([9, 9, 9], aad: [1])
        #expect(try again.unwrap(wrapped, aad: [1]) == [9, 9, 9])
        #expect(throws: StorageError.unwrapFailed) { try again.unwrap(wrapped, aad: [2]) }
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: provider.fileURL.path)
        #expect(throws: StorageError.keyFile(path: provider.fileURL.path, problem: .accessibleByOthers)) {
            _ = try KeyFileWrappingProvider(nextTo: database)
        }
    }

    @Test("a passphrase provider unwraps with the right passphrase only (scrypt via OpenSSL)")
    func passphraseProvider() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("keys.sqlite")
        let provider = try PassphraseWrappingProvider(passphrase: "open sesame", nextTo: database, parameters: testScrypt)
        let wrapped = try provider.wrap([1, 2, 3], aad: [])
        let same = try PassphraseWrappingProvider(passphrase: "open sesame", nextTo: database, parameters: testScrypt)
        #expect(try same.unwrap(wrapped, aad: []) == [1, 2, 3])
        let other = try PassphraseWrappingProvider(passphrase: "open sesame!", nextTo: database, parameters: testScrypt)
        #expect(throws: StorageError.unwrapFailed) { try other.unwrap(wrapped, aad: []) }
    }

    @Test("scrypt matches the RFC 7914 §12 test vector (password, NaCl, N=1024, r=8, p=16)")
    func scryptVector() throws {
        let derived = try ScryptParameters(n: 1024, r: 8, p: 16).deriveKey(
            password: Array("password".utf8), salt: Array("NaCl".utf8), length: 64)
        #expect(Hex.encode(derived) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test("keys survive reopening in a new process, and the private scalar is nowhere in the database files")
    func keysPersistAcrossProcessesAndStayEncrypted() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("keys.sqlite")
        let wrapping = try KeyFileWrappingProvider(nextTo: url)
        let area = try SoftwareSecureArea(location: .file(url), wrapping: wrapping, perKeyScrypt: testScrypt)
        var infos: [KeyInfo] = []
        for (alias, algorithm) in [("holder-p256", KeyAlgorithm.p256), ("holder-p384", .p384), ("holder-ed", .ed25519)] {
            infos.append(try await area.createKey(alias: alias, options: KeyCreationOptions(algorithm: algorithm)))
        }
        infos.append(try await area.createKey(alias: "holder-locked", options: KeyCreationOptions(protection: .passphrase("pin 1234"))))

        // Unwrap each record independently (key file + AES-GCM + the documented AAD) to
        // learn the private scalars, then look for them in every database file.
        let keyFile = try [UInt8](Data(contentsOf: wrapping.fileURL))
        let reader = try SQLiteConnection(location: .file(url))
        var scalars: [[UInt8]] = []
        for info in infos where !info.requiresUnlock {
            let wrapped = try #require(try reader.query(
                "SELECT wrapped_key FROM secure_area_keys WHERE alias = ?", [.text(info.alias)]).first?.first?.bytes)
            let aad = SoftwareSecureArea.keyAAD(
                alias: info.alias, algorithm: info.algorithm, publicKeyDER: try info.publicKey.spkiDER, format: 1)
            let scalar = try AESGCM.open(combined: Array(wrapped[13...]), key: SymmetricKey(bytes: keyFile), nonce: Array(wrapped[1..<13]), aad: aad)
            #expect(scalar.count == (info.algorithm.curve?.coordinateByteCount ?? 32))
            scalars.append(scalar)
        }
        reader.close()
        func scan() throws {
            for suffix in ["", "-wal", "-shm"] {
                guard let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: url.path + suffix))) else { continue }
                for scalar in scalars { #expect(!contains(bytes, scalar), "private scalar found in keys.sqlite\(suffix)") }
                #expect(!contains(bytes, keyFile), "wrapping key found in keys.sqlite\(suffix)")
            }
        }
        try scan()   // while the WAL is live
        await area.close()
        try scan()   // after the checkpoint on close

        // A new process opens the area and signs with every key.
        let message = "signed in the child"
        let (child, pipe) = try launchTestChild(
            filter: "StorageChildProcess/keyChild", environment: ["WALLET_STORAGE_KEYS_CHILD": url.path, "WALLET_STORAGE_MESSAGE": message])
        let output = await offPool { () -> String in
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            return text
        }
        #expect(child.terminationReason == .exit && child.terminationStatus == 0, "child output: \(output)")
        var signatures: [String: [UInt8]] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("signature ") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let bytes = Hex.decode(String(parts[2])) { signatures[String(parts[1])] = bytes }
        }
        #expect(signatures.count == infos.count, "child output: \(output)")
        for info in infos {
            let signature = try #require(signatures[info.alias])
            #expect(info.publicKey.verify(signature: signature, for: Array(message.utf8), algorithm: info.algorithm.signatureAlgorithm))
        }
    }
}

/// Entry points for the tests that re-launch this binary. They are not tests of their
/// own: in a normal run they are skipped (reported as skipped, never as passed); they
/// run only in the child process, where the launching test sets their variable and reads
/// what they print.
@Suite("StorageChildProcess")
struct StorageChildProcess {
    static let environment = ProcessInfo.processInfo.environment

    @Test("child: open the key area and sign with every key",
          .enabled(if: environment["WALLET_STORAGE_KEYS_CHILD"] != nil,
                   "child-process entry point of the key-reopening test; runs only in that child"))
    func keyChild() async throws {
        let path = try #require(Self.environment["WALLET_STORAGE_KEYS_CHILD"])
        let message = try #require(Self.environment["WALLET_STORAGE_MESSAGE"])
        let url = URL(fileURLWithPath: path)
        let area = try SoftwareSecureArea(location: .file(url), wrapping: try KeyFileWrappingProvider(nextTo: url),
                                          perKeyScrypt: testScrypt)
        for info in try await area.listKeys() {
            let signer = try await area.signer(for: info.alias, unlock: info.requiresUnlock ? PassphraseUnlock("pin 1234") : nil)
            let signature = try await signer.sign(Array(message.utf8))
            FileHandle.standardOutput.write(Data("signature \(info.alias) \(Hex.encode(signature))\n".utf8))
        }
    }

    @Test("child: save credentials in a loop, reporting each committed id",
          .enabled(if: environment["WALLET_STORAGE_CHILD"] != nil,
                   "child-process entry point of the SIGKILL durability test; runs only in that child"))
    func saveLoopChild() async throws {
        let path = try #require(Self.environment["WALLET_STORAGE_CHILD"])
        let url = URL(fileURLWithPath: path)
        let store = try CredentialStore(
            location: .file(url), secureArea: try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider()),
            wrapping: FixedKeyWrappingProvider())
        for number in 0..<100_000 {
            try await store.save(crashTestCredential(number))
            FileHandle.standardOutput.write(Data("committed cred-\(number)\n".utf8))
        }
    }
}
