import Testing
@testable import WalletCrypto

private struct KeyEntry: Decodable { let x: String; let y: String; let d: String }
private struct AnnexDKeys: Decodable {
    struct Expected: Decodable { let ephemeral_device_key: KeyEntry; let ephemeral_reader_key: KeyEntry }
    let expected: Expected
}
private struct AnnexDSessionKeys: Decodable {
    struct Expected: Decodable { let zab_hex: String; let sk_reader_hex: String }
    let expected: Expected
}
private struct AnnexDTranscript: Decodable {
    struct Expected: Decodable { let session_transcript_bytes_hex: String }
    let expected: Expected
}
private struct AnnexDEstablishment: Decodable {
    struct Inputs: Decodable { let sk_reader_hex: String; let reader_message_counter: Int }
    struct Expected: Decodable { let session_establishment_hex: String; let device_request_plaintext_hex: String }
    let inputs: Inputs
    let expected: Expected
}

@Suite("ISO 18013-5 Annex D session encryption (ECDH, HKDF, AES-256-GCM)")
struct AnnexDSessionTests {
    @Test("ZAB from reader-private × device-public and from device-private × reader-public match Annex D")
    func sharedSecret() throws {
        let keys = try TestVectors.shared("mdoc/annex_d_keys.json", as: AnnexDKeys.self).expected
        let expected = try TestVectors.shared("mdoc/annex_d_session_keys.json", as: AnnexDSessionKeys.self).expected
        let device = keys.ephemeral_device_key, reader = keys.ephemeral_reader_key
        let readerPrivate = try ECPrivateKey(rawRepresentation: hex(reader.d), curve: .p256)
        let devicePrivate = try ECPrivateKey(d: hex(device.d), curve: .p256)
        // The public key computed from d must equal the published coordinates.
        #expect(readerPrivate.publicKey == (try ECPublicKey(x: hex(reader.x), y: hex(reader.y), curve: .p256)))
        #expect(hexString(devicePrivate.publicKey.x) == device.x)
        #expect(hexString(devicePrivate.publicKey.y) == device.y)
        let devicePublic = try ECPublicKey(x: hex(device.x), y: hex(device.y), curve: .p256)
        let readerPublic = try ECPublicKey(x: hex(reader.x), y: hex(reader.y), curve: .p256)
        let zab = SharedSecret(bytes: try hex(expected.zab_hex))
        #expect(try readerPrivate.sharedSecret(with: devicePublic) == zab)
        #expect(try devicePrivate.sharedSecret(with: readerPublic) == zab)
        #expect(try readerPrivate.sharedSecret(with: devicePublic).withUnsafeBytes { hexString(Array($0)) } == expected.zab_hex)
    }

    @Test("SKReader = HKDF-SHA256(ZAB, SHA-256(SessionTranscriptBytes), \"SKReader\", 32) matches Annex D")
    func skReader() throws {
        let expected = try TestVectors.shared("mdoc/annex_d_session_keys.json", as: AnnexDSessionKeys.self).expected
        let transcript = try TestVectors.shared("mdoc/annex_d_session_transcript.json", as: AnnexDTranscript.self)
        let salt = SHA256.digest(try hex(transcript.expected.session_transcript_bytes_hex))
        let skReader = try HKDF.deriveKey(
            inputKeyMaterial: hex(expected.zab_hex), salt: salt, info: Array("SKReader".utf8), outputByteCount: 32)
        #expect(hexString(skReader) == expected.sk_reader_hex)
        // The same derivation through the opaque types the session code uses.
        let derived = try SharedSecret(bytes: hex(expected.zab_hex))
            .hkdfDerivedSymmetricKey(salt: salt, info: Array("SKReader".utf8), outputByteCount: 32)
        #expect(try derived == SymmetricKey(bytes: hex(expected.sk_reader_hex)))
    }

    @Test("The SessionEstablishment data decrypts with SKReader and IV 0x00×8 || counter 1 to the DeviceRequest, and re-encrypts byte for byte")
    func sessionEstablishment() throws {
        let file = try TestVectors.shared("mdoc/annex_d_session_establishment.json", as: AnnexDEstablishment.self)
        let message = try hex(file.expected.session_establishment_hex)
        // SessionEstablishment is the CBOR map {"eReaderKey": ..., "data": bstr}. "data" is its last
        // entry: text(4) "data" = 64 64617461, then bstr header 59 02df (735 bytes) and the bytes,
        // which run to the end of the message. No CBOR library here, so slice after that marker.
        let marker: [UInt8] = [0x64, 0x64, 0x61, 0x74, 0x61, 0x59, 0x02, 0xdf]
        let start = try #require(firstIndex(of: marker, in: message)) + marker.count
        let data = Array(message[start...])
        #expect(data.count == 0x02df)
        let counter = UInt32(file.inputs.reader_message_counter)
        let iv: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
            + [UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16), UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)]
        let key = SymmetricKey(bytes: try hex(file.inputs.sk_reader_hex))
        let plaintext = try AESGCM.open(combined: data, key: key, nonce: iv)
        #expect(hexString(plaintext) == file.expected.device_request_plaintext_hex)
        let resealed = try AESGCM.seal(plaintext, key: key, nonce: iv)
        #expect(resealed.ciphertextAndTag == data)
        // The device-side IV (identifier ...0001) must not open the reader's message.
        var deviceIV = iv
        deviceIV[7] = 1
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(combined: data, key: key, nonce: deviceIV) }
    }

    private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<(start + needle.count)]) == needle {
            return start
        }
        return nil
    }
}
