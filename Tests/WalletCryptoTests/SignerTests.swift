import Testing
@testable import WalletCrypto

@Suite("Signer protocol and algorithm checks")
struct SignerTests {
    @Test("SoftwareSigner signs with the key's natural algorithm and PublicKey.verify accepts it")
    func softwareSigners() async throws {
        let message = Array("to be signed".utf8)
        var signers: [any Signer] = try ECCurve.allCases.map { SoftwareSigner(try ECPrivateKey.generate(curve: $0)) }
        signers.append(SoftwareSigner(try Ed25519PrivateKey.generate()))
        #expect(signers.map(\.algorithm) == [.es256, .es384, .es512, .edDSA])
        for signer in signers {
            let signature = try await signer.sign(message)
            #expect(signer.publicKey.verify(signature: signature, for: message, algorithm: signer.algorithm))
            #expect(!signer.publicKey.verify(signature: signature, for: message + [1], algorithm: signer.algorithm))
            for other in SignatureAlgorithm.allCases where other != signer.algorithm {
                #expect(!signer.publicKey.verify(signature: signature, for: message, algorithm: other))
            }
        }
    }

    @Test("Algorithm metadata maps JOSE names to curves and hashes")
    func metadata() {
        #expect(SignatureAlgorithm(rawValue: "ES384")?.curve == .p384)
        #expect(SignatureAlgorithm.es512.hashAlgorithm == .sha512)
        #expect(SignatureAlgorithm.edDSA.curve == nil)
    }
}
