import Foundation
import Testing
import WalletCrypto

@Suite("SystemRandom.uuid")
struct RandomUUIDTests {
    @Test("version 4, RFC 9562 variant, and no repeats in 10,000")
    func versionVariantAndUniqueness() {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let uuid = SystemRandom().uuid()
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4)
            #expect(bytes[8] >> 6 == 0b10)
            // The string form Foundation parses back (the SDK's aliases and log ids).
            #expect(UUID(uuidString: uuid.uuidString) == uuid)
            seen.insert(uuid)
        }
        #expect(seen.count == 10_000)
    }
}
