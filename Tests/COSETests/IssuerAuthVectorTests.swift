import CBOR
import COSE
import Foundation
import Testing
import WalletCrypto

@Suite("ISO 18013-5 Annex D issuerAuth")
struct IssuerAuthVectorTests {
    typealias S = COSETestSupport

    static func load() throws -> (issuerAuth: [UInt8], ds: [UInt8], iaca: [UInt8]) {
        let root = try S.json("mdoc/annex_d_issuer_auth.json")
        let expected = try #require(root["expected"] as? [String: Any])
        return (try S.hex(try #require(expected["issuer_auth_cose_sign1_hex"] as? String)),
                try S.hex(try #require(expected["ds_cert_der_hex"] as? String)),
                try S.hex(try #require(expected["iaca_cert_der_hex"] as? String)))
    }

    @Test("issuerAuth parses, its x5chain is the DS certificate, and it verifies with the DS key")
    func verifiesWithDocumentSignerKey() throws {
        let vector = try Self.load()
        let issuerAuth = try COSESign1(encoded: vector.issuerAuth)
        #expect(!issuerAuth.isTagged)
        #expect(issuerAuth.encodedBytes == vector.issuerAuth)
        #expect(try issuerAuth.headers.algorithm() == .es256)
        let chain = try issuerAuth.x5chain()
        #expect(chain.count == 1)
        #expect(chain.first?.derEncoded == vector.ds)
        let key = try PublicKey(spkiDER: try #require(chain.first).subjectPublicKeyInfoDER)
        try issuerAuth.verify(publicKey: key)
    }

    @Test("issuerAuth's payload is tag 24 around the MobileSecurityObject bytes")
    func payloadIsTaggedMSO() throws {
        let issuerAuth = try COSESign1(encoded: try Self.load().issuerAuth)
        let payload = try #require(issuerAuth.payload)
        let item = try CBOR.decodeItem(payload)
        #expect(item.tag == 24)
        let mso = try item.embeddedItem()
        #expect(mso.value["version"] == .textString("1.0"))
        #expect(mso.value["digestAlgorithm"] == .textString("SHA-256"))
    }

    @Test("issuerAuth verifies through x5chain validation against the IACA in the DS validity period")
    func verifiesThroughChain() throws {
        let vector = try Self.load()
        let issuerAuth = try COSESign1(encoded: vector.issuerAuth)
        let iaca = try X509Certificate(derEncoded: vector.iaca)
        let time = Date(timeIntervalSince1970: 1_609_459_200) // 2021-01-01
        let chain = try issuerAuth.verify(trustAnchors: [iaca], at: time, policy: .mdocDocumentSigner)
        #expect(chain.anchor == iaca)
    }

    @Test("issuerAuth after the DS certificate expired fails chain validation with a typed reason")
    func expiredChainRejected() throws {
        let vector = try Self.load()
        let issuerAuth = try COSESign1(encoded: vector.issuerAuth)
        let iaca = try X509Certificate(derEncoded: vector.iaca)
        let later = Date(timeIntervalSince1970: 1_700_000_000) // 2023
        #expect(throws: COSEError.untrusted(.expired(depth: 0))) {
            try issuerAuth.verify(trustAnchors: [iaca], at: later, policy: .mdocDocumentSigner)
        }
    }

    @Test("issuerAuth with a flipped payload byte fails with invalidSignature")
    func tamperedPayload() throws {
        let issuerAuth = try COSESign1(encoded: try Self.load().issuerAuth)
        var payload = try #require(issuerAuth.payload)
        payload[payload.count / 2] ^= 0x01
        guard case .array(var parts) = issuerAuth.cbor else { Issue.record("not an array"); return }
        parts[2] = .byteString(payload)
        let tampered = try COSESign1(encoded: CBOR.array(parts).encoded())
        let key = try PublicKey(spkiDER: try #require(try tampered.x5chain().first).subjectPublicKeyInfoDER)
        #expect(throws: COSEError.invalidSignature) { try tampered.verify(publicKey: key) }
    }
}
