import JOSE
import WalletCrypto

// libFuzzer entry for the JOSE parsers: the input is read as a compact JWS, JWT and
// JWE, as a JWK and a JWK Set, and parsed objects are pushed through verification and
// decryption with fixed keys so the deeper paths (crit, key checks, ECDH, AES-GCM,
// inflate) run on hostile input too. Any thrown JOSEError is fine; a crash is not.

/// Fixed P-256 key (RFC 7515 Appendix A.3) for verification and decryption attempts.
private let fixedKey: JWK? = try? JWK(json: """
    {"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",\
    "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}
    """)
private let fixedHMACKey = SymmetricKey(bytes: Array(repeating: 0x2A, count: 32))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)

    if let jws = try? JWS(compact: text) {
        if let fixedKey, let publicJWK = try? fixedKey.publicJWK { try? jws.verify(with: publicJWK) }
        try? jws.verify(hmacKey: fixedHMACKey, understoodCriticalHeaders: ["b64"])
        _ = try? jws.verifyWithEmbeddedJWK()
        _ = try? jws.header.certificateChain()
        _ = jws.compactSerialization
    }
    if let jwt = try? JWT(compact: text) {
        _ = jwt.claims.audience
        try? jwt.validate(JWTValidationOptions(now: .distantPast, expectedAudience: "a", expectedType: "jwt"))
        _ = try? jwt.claims.confirmationKey()
    }
    if let jwe = try? JWE(compact: text) {
        _ = try? jwe.ephemeralPublicKey()
        if let fixedKey { _ = try? jwe.decrypt(with: fixedKey, maximumDecompressedSize: 1 << 16) }
        _ = jwe.compactSerialization
    }
    if let jwk = try? JWK(json: bytes) {
        _ = jwk.thumbprint
        _ = jwk.jsonString
        _ = try? jwk.publicKey()
        _ = try? jwk.publicJWK
    }
    _ = try? JWKSet(json: bytes)
    if let header = try? JOSEHeader(encoded: text) { _ = header.typeMatches("jwt") }
    return 0
}
