import Testing
@testable import WalletCrypto

@Suite("SHA-2, HMAC, constant-time comparison and random bytes")
struct HashAlgorithmTests {
    @Test("SHA-256/384/512 of \"abc\" match FIPS 180-2 Appendix B/C/D")
    func fipsAbc() {
        let abc = Array("abc".utf8)
        #expect(hexString(SHA256.digest(abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hexString(SHA384.digest(abc)) == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
        #expect(hexString(SHA512.digest(abc)) == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test("The incremental hasher agrees with the one-shot digest for every algorithm")
    func incremental() throws {
        let message = (0..<1000).map { UInt8($0 % 251) }
        for algorithm in HashAlgorithm.allCases {
            var hasher = try IncrementalHasher(algorithm: algorithm)
            try hasher.update(message[..<17])
            try hasher.update([])
            try hasher.update(message[17...])
            let digest = try hasher.finalize()
            #expect(digest == algorithm.digest(message))
            #expect(digest.count == algorithm.digestByteCount)
        }
    }

    @Test("The digest is the same for an array, a slice in the middle of one, a sequence without contiguous storage, and empty input")
    func digestOfEveryShape() {
        let abc = Array("abc".utf8)
        let padded: [UInt8] = [0xFF, 0xFE] + abc + [0x00]
        let slice = padded[2..<5]   // start index 2: the view is hashed where it lies
        let noncontiguous = abc.lazy.map { $0 }
        let expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(hexString(SHA256.digest(slice)) == expected)
        #expect(hexString(SHA256.digest(noncontiguous)) == expected)
        #expect(hexString(SHA256.digest(abc[...])) == expected)
        // FIPS 180-2: SHA-256 of the empty string, from an empty array, an empty slice and
        // an empty non-contiguous sequence.
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        #expect(hexString(SHA256.digest([UInt8]())) == empty)
        #expect(hexString(SHA256.digest(padded[3..<3])) == empty)
        #expect(hexString(SHA256.digest(EmptyCollection<UInt8>())) == empty)
        for algorithm in HashAlgorithm.allCases {
            #expect(algorithm.digest(slice) == algorithm.digest(abc))
        }
    }

    @Test("HMAC-SHA256 matches RFC 4231 test case 2 and verifies in constant time")
    func hmacRFC4231() throws {
        let key = SymmetricKey(bytes: Array("Jefe".utf8))
        let message = Array("what do ya want for nothing?".utf8)
        let code = try HMAC.authenticationCode(for: message, key: key, algorithm: .sha256)
        #expect(hexString(code) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(try HMAC.isValid(code, for: message, key: key))
        var tampered = code
        tampered[0] ^= 1
        #expect(try !HMAC.isValid(tampered, for: message, key: key))
        #expect(try !HMAC.isValid(Array(code.prefix(16)), for: message, key: key))
        #expect(try HMAC.authenticationCode(for: message, key: key, algorithm: .sha512).count == 64)
        #expect(try HMAC.authenticationCode(for: [], key: SymmetricKey(bytes: []), algorithm: .sha384).count == 48)
    }

    @Test("ConstantTime.equals compares content and treats a length mismatch as unequal")
    func constantTime() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([], []))
    }

    @Test("SystemRandom returns the requested number of bytes and rejects a negative count")
    func secureRandom() throws {
        #expect(try SystemRandom().bytes(count: 0).isEmpty)
        let a = try SystemRandom().bytes(count: 32)
        let b = try SystemRandom().bytes(count: 32)
        #expect(a.count == 32 && b.count == 32 && a != b)
        #expect(throws: CryptoError.invalidLength(.randomByteCount, actual: -1)) { try SystemRandom().bytes(count: -1) }
    }
}
