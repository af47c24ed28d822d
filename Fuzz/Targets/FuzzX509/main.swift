import Foundation
import WalletCrypto

// libFuzzer entry for X.509: the input is parsed as a DER certificate (and as PEM), every
// accessor the SDK reads is touched, and chains built from it are validated against a
// fixed anchor under each trust policy, so that OpenSSL's path validation and the
// policies' checks (key usage, EKU, SAN, hash, leaf validity) run on hostile certificates.
// Any thrown error is fine; a crash, a leak or a hang is not. The first byte splits the
// rest into a leaf and its issuer (at first byte × length / 255).

/// A fixed, self-signed P-256 CA (the anchor every chain is validated against).
private let anchor: X509Certificate? = {
    guard let key = try? ECPrivateKey.generate(curve: .p256),
          let name = try? DistinguishedName([(.commonName, "Fuzz Anchor")]) else { return nil }
    return try? CertificateBuilder.certificateAuthority(subject: name, notBefore: Date(timeIntervalSince1970: 1_600_000_000),
                                                       notAfter: Date(timeIntervalSince1970: 2_000_000_000))
        .selfSigned(with: .ec(key))
}()
private let validationTime = Date(timeIntervalSince1970: 1_750_000_000)
private let policies: [X509TrustPolicy] = [
    .pathValidationOnly, .mdocDocumentSigner, .mdocReaderAuthentication, .signingCertificate, .keyAttestationSigner,
    .sdJWTVCIssuer("https://issuer.example"), .openID4VPClient(sanDNS: "verifier.example"),
    .openID4VPClient(certificateSHA256: [UInt8](repeating: 0, count: 32)),
]

private func touch(_ certificate: X509Certificate) {
    _ = certificate.version
    _ = certificate.subject.rfc4514String
    _ = certificate.issuer.rfc4514String
    _ = certificate.subject.commonName
    _ = certificate.serialNumberHex
    _ = certificate.notBefore
    _ = certificate.notAfter
    _ = certificate.isSelfSigned
    _ = try? certificate.publicKey
    _ = certificate.subjectPublicKeyInfoDER
    _ = certificate.signatureAlgorithmName
    _ = certificate.basicConstraints
    _ = certificate.keyUsage
    _ = certificate.extendedKeyUsage
    _ = certificate.subjectAlternativeNames
    _ = certificate.subjectAlternativeDNSNames
    _ = certificate.subjectKeyIdentifier
    _ = certificate.authorityKeyIdentifier
    _ = certificate.sha256Fingerprint
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let split = min(bytes.count, Int(data[0]) * bytes.count / 255)
    let whole = try? X509Certificate(derEncoded: bytes)
    // Split into a leaf and an issuer that both parse: the issuer as the anchor, so that the
    // policies' rules run on a validated (fuzzed) chain, not only on failures to build one.
    if split > 0, split < bytes.count, let issuer = try? X509Certificate(derEncoded: Array(bytes[split...])) {
        let own = X509ChainValidator(anchors: [issuer])
        for policy in policies { _ = try? own.validate(chainDER: [Array(bytes[..<split])], at: validationTime, policy: policy) }
    }
    if let whole { touch(whole) }
    if let pem = try? X509Certificate.parsePEM(String(decoding: bytes, as: UTF8.self)) { pem.forEach(touch) }
    guard let anchor else { return 0 }
    let validator = X509ChainValidator(anchors: [anchor])
    let chains: [[[UInt8]]] = [[bytes], [Array(bytes[..<split]), Array(bytes[split...])], []]
    for chain in chains {
        for policy in policies { _ = try? validator.validate(chainDER: chain, at: validationTime, policy: policy) }
    }
    if let whole {
        // The certificate as its own anchor, and as the leaf under the fixed one.
        _ = try? X509ChainValidator(anchors: [whole]).validate(chain: [whole], at: validationTime, policy: .pathValidationOnly)
        _ = try? validator.validate(chain: [whole, anchor], at: validationTime, policy: .mdocDocumentSigner)
        _ = try? validator.validate(chain: [whole], at: validationTime, policy: .openID4VPClient(sanDNS: "verifier.example"))
    }
    return 0
}
