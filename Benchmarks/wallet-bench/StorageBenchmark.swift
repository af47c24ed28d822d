import Foundation
import WalletCrypto
import WalletRuntime
import WalletStorage

/// The `storage` case: save credentials one by one (one transaction each, WAL,
/// synchronous = FULL, refresh token encrypted) into a file database, then list them
/// all; at 1,000 and at 10,000 credentials. Prints the cost per credential, its growth
/// from 1,000 to 10,000, and the crypto floor (AES-256-GCM of the refresh token).
enum StorageBenchmark {
    static func run(iterations: Int, python: String?) throws {
        _ = python
        let box = LockedBox<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await measure()
                box.withLock { $0 = .success(()) }
            } catch {
                box.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try box.withLock { $0 }?.get()
    }

    private static func credential(_ number: Int) -> StoredCredential {
        let raw = [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: 2048)
        return StoredCredential(
            id: "credential-\(number)", format: number % 2 == 0 ? .sdJwtVc : .msoMdoc,
            type: number % 2 == 0 ? "urn:eudi:pid:1" : "org.iso.18013.5.1.mDL",
            issuer: IssuerInfo(identifier: "https://issuer\(number % 7).example", display: [DisplayMetadata(name: "Issuer")]),
            display: [DisplayMetadata(name: "Credential \(number)", locale: "en")],
            instances: [CredentialInstance(index: 0, keyAlias: "key-\(number)", raw: raw)],
            policy: CredentialPolicy(batchSize: 1, use: .rotate), refreshToken: "refresh-token-\(number)-abcdefghijklmnop")
    }

    private static func seconds(_ start: UInt64) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private static func measure() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wallet-bench-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let wrapping = try EphemeralWrappingProvider()

        // The floor: the crypto a save and a read do per credential (seal + open the refresh token).
        let token = Array("refresh-token-0-abcdefghijklmnop".utf8)
        let aad = Array("aad".utf8)
        let floor = medianSeconds(iterations: 2_000) {
            if let sealed = try? wrapping.wrap(token, aad: aad) { blackHole(try? wrapping.unwrap(sealed, aad: aad)) }
        }

        print("storage: file database, WAL, synchronous=FULL, one transaction per save, 2 KB per credential")
        var perSave: [Int: Double] = [:], perList: [Int: Double] = [:]
        for count in [1_000, 10_000] {
            let store = try CredentialStore(
                location: .file(directory.appendingPathComponent("bench-\(count).sqlite")), secureArea: area, wrapping: wrapping)
            let saveStart = DispatchTime.now().uptimeNanoseconds
            for number in 0..<count { try await store.save(credential(number)) }
            let save = seconds(saveStart)
            let listStart = DispatchTime.now().uptimeNanoseconds
            let listed = try await store.list()
            let list = seconds(listStart)
            guard listed.count == count else { throw BenchmarkFailure() }
            let filterStart = DispatchTime.now().uptimeNanoseconds
            let filtered = try await store.list(CredentialFilter(format: .msoMdoc, issuer: "https://issuer3.example"))
            let filter = seconds(filterStart)
            blackHole(filtered)
            await store.close()
            perSave[count] = save / Double(count)
            perList[count] = list / Double(count)
            print(String(format: "  %6d credentials: save %7.1f µs/credential (%.2f s total), list %6.1f µs/credential (%.3f s), filtered list %.1f ms (%d hits)",
                         count, save / Double(count) * 1e6, save, list / Double(count) * 1e6, list, filter * 1e3, filtered.count))
        }
        let small = 1_000, large = 10_000
        if let s1 = perSave[small], let s2 = perSave[large], let l1 = perList[small], let l2 = perList[large] {
            print(String(format: "  growth 1,000 -> 10,000 per credential: save x%.2f, list x%.2f (1.00 = constant cost per credential)", s2 / s1, l2 / l1))
            print(String(format: "  floor: AES-256-GCM seal+open of the refresh token %.2f µs; save = %.0fx, list = %.0fx the floor at 10,000",
                         floor * 1e6, s2 / floor, l2 / floor))
        }
    }
}
