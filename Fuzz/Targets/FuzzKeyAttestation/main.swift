import Foundation
import WalletCrypto
import OpenID4VCI

// libFuzzer entry for key attestations (OpenID4VCI 1.0 Appendix D): the input is read
// as a compact key-attestation JWT, parsed without verification (claims, attested
// keys, levels, x5c), then pushed through the verifier with a fixed, unrelated trust
// anchor so the chain and claim checks run on hostile input. Errors are fine; a crash
// is not.

/// A self-signed anchor no input can chain to (built once).
private let anchor: X509Certificate? = {
    guard let key = try? ECPrivateKey.generate(curve: .p256), let spki = try? key.publicKey.spkiDER else { return nil }
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    return try? CertificateBuilder.certificateAuthority(
        subject: DistinguishedName([(.commonName, "Fuzz anchor")]), subjectPublicKeyInfoDER: spki,
        notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(86_400)
    ).selfSigned(with: .ec(key))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let attestation = try? KeyAttestation(unverified: text) {
        _ = attestation.attestedKeys
        _ = attestation.keyStorage
        _ = attestation.userAuthentication
        _ = attestation.certificateChain
    }
    let verifier = KeyAttestationVerifier(trustAnchors: anchor.map { [$0] } ?? [])
    _ = try? verifier.verify(text, expectedNonce: "n", at: Date(timeIntervalSince1970: 1_800_000_000))
    return 0
}
