import Testing
@testable import WalletCrypto

private struct AEADFile: Decodable {
    struct Test: Decodable {
        let tcId: Int
        let key: String
        let iv: String
        let aad: String
        let msg: String
        let ct: String
        let tag: String
        let result: String
    }
    let tests: [Test]
}

/// A deterministic `RandomSource` for nonce-generation tests.
private struct FixedRandom: RandomSource {
    let byte: UInt8
    func bytes(count: Int) throws(CryptoError) -> [UInt8] { [UInt8](repeating: byte, count: count) }
}

@Suite("AES-GCM")
struct AESGCMTests {
    @Test("Wycheproof AES-GCM subset: valid cases seal and open exactly, modified tags fail")
    func wycheproof() throws {
        let file = try TestVectors.local("wycheproof_aes_gcm_subset.json", as: AEADFile.self)
        #expect(file.tests.count >= 30)
        for test in file.tests {
            let key = SymmetricKey(bytes: try hex(test.key)), nonce = try hex(test.iv), aad = try hex(test.aad)
            if test.result == "valid" {
                let box = try AESGCM.seal(hex(test.msg), key: key, nonce: nonce, aad: aad)
                #expect(hexString(box.ciphertext) == test.ct, "tcId \(test.tcId)")
                #expect(hexString(box.tag) == test.tag, "tcId \(test.tcId)")
                let opened = try AESGCM.open(ciphertext: hex(test.ct), tag: hex(test.tag), key: key, nonce: nonce, aad: aad)
                #expect(hexString(opened) == test.msg, "tcId \(test.tcId)")
                // The one-buffer forms give and take the same bytes.
                let combined = try AESGCM.sealCombined(hex(test.msg), key: key, nonce: nonce, aad: aad)
                #expect(hexString(combined) == test.ct + test.tag, "tcId \(test.tcId)")
                #expect(hexString(try AESGCM.open(combined: combined, key: key, nonce: nonce, aad: aad)) == test.msg, "tcId \(test.tcId)")
            } else {
                #expect(throws: CryptoError.authenticationFailed, "tcId \(test.tcId)") {
                    try AESGCM.open(ciphertext: hex(test.ct), tag: hex(test.tag), key: key, nonce: nonce, aad: aad)
                }
                #expect(throws: CryptoError.authenticationFailed, "tcId \(test.tcId)") {
                    try AESGCM.open(combined: hex(test.ct + test.tag), key: key, nonce: nonce, aad: aad)
                }
            }
        }
    }

    @Test("Tampering with ciphertext, AAD, nonce or tag yields authenticationFailed")
    func tampering() throws {
        let key = SymmetricKey(bytes: [UInt8](repeating: 0x42, count: 32))
        let nonce = [UInt8](repeating: 1, count: 12)
        let box = try AESGCM.seal(Array("attack at dawn".utf8), key: key, nonce: nonce, aad: [9, 9])
        #expect(try AESGCM.open(box, key: key, aad: [9, 9]) == Array("attack at dawn".utf8))
        #expect(try AESGCM.open(combined: box.ciphertextAndTag, key: key, nonce: nonce, aad: [9, 9]) == Array("attack at dawn".utf8))
        var badTag = box.tag
        badTag[15] ^= 0x80
        var badCiphertext = box.ciphertext
        badCiphertext[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(ciphertext: box.ciphertext, tag: badTag, key: key, nonce: nonce, aad: [9, 9])
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(ciphertext: badCiphertext, tag: box.tag, key: key, nonce: nonce, aad: [9, 9])
        }
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(box, key: key, aad: [9]) }
        var badCombined = box.ciphertextAndTag
        for position in [0, badCombined.count - 1] {
            badCombined[position] ^= 1
            #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(combined: badCombined, key: key, nonce: nonce, aad: [9, 9]) }
            badCombined[position] ^= 1
        }
        // Only a tag, no ciphertext: the empty plaintext, authenticated.
        let emptySealed = try AESGCM.sealCombined([], key: key, nonce: nonce, aad: [9, 9])
        #expect(emptySealed.count == AESGCM.tagByteCount)
        #expect(try AESGCM.open(combined: emptySealed, key: key, nonce: nonce, aad: [9, 9]) == [])
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(combined: emptySealed, key: key, nonce: nonce) }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(ciphertext: box.ciphertext, tag: box.tag, key: key, nonce: [UInt8](repeating: 2, count: 12), aad: [9, 9])
        }
    }

    @Test("Bad key, nonce and tag lengths are typed errors")
    func lengths() {
        let key16 = SymmetricKey(bytes: [UInt8](repeating: 0, count: 16))
        #expect(throws: CryptoError.invalidLength(.aesKey, actual: 15)) {
            try AESGCM.seal([1], key: SymmetricKey(bytes: [UInt8](repeating: 0, count: 15)), nonce: [UInt8](repeating: 0, count: 12))
        }
        #expect(throws: CryptoError.invalidLength(.aesGCMNonce, actual: 0)) {
            try AESGCM.seal([1], key: key16, nonce: [])
        }
        #expect(throws: CryptoError.invalidLength(.aesGCMTag, actual: 12)) {
            try AESGCM.open(ciphertext: [1], tag: [UInt8](repeating: 0, count: 12), key: key16, nonce: [1])
        }
        #expect(throws: CryptoError.invalidLength(.aesGCMCiphertextAndTag, actual: 3)) {
            try AESGCM.open(combined: [1, 2, 3], key: key16, nonce: [1])
        }
    }

    @Test("Without a nonce, seal draws 12 bytes from the injected random source")
    func generatedNonce() throws {
        let key = SymmetricKey(bytes: [UInt8](repeating: 3, count: 16))
        let box = try AESGCM.seal([1, 2, 3], key: key, random: FixedRandom(byte: 0xab))
        #expect(box.nonce == [UInt8](repeating: 0xab, count: 12))
        #expect(try AESGCM.open(box, key: key) == [1, 2, 3])
        #expect(try AESGCM.seal([], key: key).nonce.count == 12)
    }
}
