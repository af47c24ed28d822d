import CBOR
import COSE
import Testing
import WalletCrypto

@Suite("COSE_Mac0 creation, verification and rejection")
struct COSEMac0Tests {
    static let keyBytes = Array(repeating: UInt8(0x42), count: 32)
    static let key = SymmetricKey(bytes: keyBytes)
    static let payload = Array("DeviceAuthentication".utf8)

    @Test("HMAC 256/256 tagged and untagged messages verify after parsing")
    func roundTrip() throws {
        for tagged in [true, false] {
            let message = try COSEMac0.create(payload: Self.payload, key: Self.key, externalAAD: [7], tagged: tagged)
            #expect(message.encodedBytes.first == (tagged ? 0xd1 : 0x84))
            #expect(message.authenticationTag.count == 32)
            let parsed = try COSEMac0(encoded: message.encodedBytes)
            #expect(parsed == message)
            try parsed.verify(key: Self.key, externalAAD: [7])
            #expect(throws: COSEError.invalidMAC) { try parsed.verify(key: Self.key, externalAAD: [8]) }
        }
    }

    @Test("a wrong key fails with invalidMAC")
    func wrongKey() throws {
        let message = try COSEMac0.create(payload: Self.payload, key: Self.key)
        var other = Self.keyBytes
        other[0] ^= 1
        #expect(throws: COSEError.invalidMAC) { try message.verify(key: SymmetricKey(bytes: other)) }
        #expect(throws: COSEError.invalidKey(.emptySymmetricKey)) { try message.verify(key: SymmetricKey(bytes: [])) }
    }

    @Test("a detached payload (DeviceMac) is sent as nil and verified when supplied")
    func detached() throws {
        let message = try COSEMac0.create(payload: Self.payload, detached: true, key: Self.key, tagged: false)
        let parsed = try COSEMac0(encoded: message.encodedBytes)
        #expect(parsed.payload == nil)
        try parsed.verify(key: Self.key, detachedPayload: Self.payload)
        #expect(throws: COSEError.missingPayload) { try parsed.verify(key: Self.key) }
        #expect(throws: COSEError.invalidMAC) { try parsed.verify(key: Self.key, detachedPayload: [1]) }
    }

    @Test("HMAC 256/64 truncates the tag to 8 bytes and rejects a full-length tag")
    func truncated() throws {
        let message = try COSEMac0.create(payload: Self.payload, key: Self.key, algorithm: .hmac256Truncated64)
        #expect(message.authenticationTag.count == 8)
        try COSEMac0(encoded: message.encodedBytes).verify(key: Self.key)
        let full = try COSEMac0.create(payload: Self.payload, key: Self.key, protected: COSEHeaderMap([(.algorithm, CBOR(5))]))
        guard case .tagged(_, .array(var parts)) = message.cbor else { Issue.record("not tagged"); return }
        parts[3] = .byteString(full.authenticationTag)
        #expect(throws: COSEError.invalidMAC) { try COSEMac0(cbor: .array(parts)).verify(key: Self.key) }
    }

    @Test("a signature algorithm or a mismatched COSE_Key alg fails with algorithmKeyMismatch")
    func algorithmMismatch() throws {
        #expect(throws: COSEError.algorithmKeyMismatch) {
            _ = try COSEMac0.create(payload: Self.payload, key: Self.key, algorithm: .es256)
        }
        let signatureAlg = CBOR.array([.byteString([0xa1, 0x01, 0x26]), .map([:]), .byteString([1]), .byteString([])])
        #expect(throws: COSEError.algorithmKeyMismatch) { try COSEMac0(cbor: signatureAlg).verify(key: Self.key) }
        let coseKey = try COSEKey(symmetricKey: Self.key, algorithm: .hmac256)
        let message = try COSEMac0.create(payload: Self.payload, key: coseKey)
        try message.verify(key: coseKey)
        #expect(throws: COSEError.algorithmKeyMismatch) {
            _ = try COSEMac0.create(payload: Self.payload, key: coseKey, algorithm: .hmac384)
        }
        #expect(throws: COSEError.missingAlgorithm) {
            try COSEMac0(cbor: .array([.byteString([]), .map([:]), .byteString([1]), .byteString([])])).verify(key: Self.key)
        }
    }

    @Test("alg in the unprotected bucket leaves the protected bucket a zero-length byte string")
    func unprotectedAlgorithm() throws {
        let message = try COSEMac0.create(payload: Self.payload, key: Self.key,
                                          unprotected: COSEHeaderMap([(.algorithm, CBOR(5))]))
        #expect(message.headers.protectedBytes.isEmpty)
        #expect(Array(message.encodedBytes.prefix(3)) == [0xd1, 0x84, 0x40])
        try COSEMac0(encoded: message.encodedBytes).verify(key: Self.key)
    }

    @Test("a COSE_Sign1 tag on a Mac0 and a Mac0 tag on a Sign1 are rejected with unexpectedTag")
    func wrongTags() throws {
        let message = try COSEMac0.create(payload: Self.payload, key: Self.key)
        #expect(throws: COSEError.unexpectedTag(17)) { _ = try COSESign1(encoded: message.encodedBytes) }
        guard case .tagged(_, let body) = message.cbor else { Issue.record("not tagged"); return }
        #expect(throws: COSEError.unexpectedTag(18)) { _ = try COSEMac0(cbor: .tagged(18, body)) }
    }
}
