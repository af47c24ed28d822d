import Testing
@testable import WalletCrypto

private struct RFC5869File: Decodable {
    struct Vector: Decodable {
        struct Inputs: Decodable {
            let hash: String
            let ikm_hex: String
            let salt_hex: String?
            let info_hex: String?
            let length: Int
        }
        struct Expected: Decodable {
            let prk_hex: String
            let okm_hex: String
        }
        let name: String
        let inputs: Inputs
        let expected: Expected
    }
    let vectors: [Vector]
}

@Suite("HKDF (RFC 5869)")
struct HKDFTests {
    @Test("All SHA-256 cases of RFC 5869 Appendix A reproduce PRK and OKM (SHA-1 cases are not supported)")
    func rfc5869() throws {
        let file = try TestVectors.shared("hkdf/rfc5869_appendix_a.json", as: RFC5869File.self)
        let cases = file.vectors.filter { $0.inputs.hash == "SHA-256" }
        #expect(cases.count == 3)
        for vector in cases {
            let ikm = try hex(vector.inputs.ikm_hex)
            let salt = try hex(vector.inputs.salt_hex ?? "")
            let info = try hex(vector.inputs.info_hex ?? "")
            let prk = try HKDF.extract(inputKeyMaterial: ikm, salt: salt, hash: .sha256)
            #expect(hexString(prk) == vector.expected.prk_hex, "\(vector.name)")
            let okm = try HKDF.expand(
                pseudoRandomKey: prk, info: info, outputByteCount: vector.inputs.length, hash: .sha256)
            #expect(hexString(okm) == vector.expected.okm_hex, "\(vector.name)")
            let oneShot = try HKDF.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: vector.inputs.length, hash: .sha256)
            #expect(hexString(oneShot) == vector.expected.okm_hex, "\(vector.name)")
        }
    }

    @Test("Output lengths outside 1...255×HashLen and a short PRK are rejected with typed errors")
    func lengths() throws {
        let ikm = [UInt8](repeating: 7, count: 32)
        #expect(throws: CryptoError.invalidLength(.hkdfOutput, actual: 0)) {
            try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 0)
        }
        #expect(throws: CryptoError.self) { try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 255 * 32 + 1) }
        #expect(try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 255 * 32).count == 255 * 32)
        #expect(throws: CryptoError.self) { try HKDF.expand(pseudoRandomKey: [1, 2, 3], outputByteCount: 16) }
        #expect(try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 48, hash: .sha384).count == 48)
    }
}

@Suite("scrypt (RFC 7914)")
struct ScryptTests {
    @Test("RFC 7914 §12 vectors 1 and 2 are reproduced")
    func rfc7914Vectors() throws {
        let empty = try Scrypt.deriveKey(password: [], salt: [], cost: 16, blockSize: 1, parallelism: 1, outputByteCount: 64)
        #expect(hexString(empty) == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
            + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
        let nacl = try Scrypt.deriveKey(password: Array("password".utf8), salt: Array("NaCl".utf8),
                                        cost: 1024, blockSize: 8, parallelism: 16, outputByteCount: 64)
        #expect(hexString(nacl) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test("invalid parameters are typed errors")
    func invalidParameters() {
        #expect(throws: CryptoError.self) { try Scrypt.deriveKey(password: [1], salt: [2], cost: 1000, blockSize: 8, parallelism: 1) }
        #expect(throws: CryptoError.self) { try Scrypt.deriveKey(password: [1], salt: [2], cost: 16, blockSize: 0, parallelism: 1) }
        #expect(throws: CryptoError.self) { try Scrypt.deriveKey(password: [1], salt: [2], cost: 16, blockSize: 1, parallelism: 1, outputByteCount: 0) }
        #expect(throws: CryptoError.self) {
            try Scrypt.deriveKey(password: [1], salt: [2], cost: 1 << 62, blockSize: 1 << 30, parallelism: 1)
        }
    }
}
