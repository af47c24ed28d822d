import COSE
import WalletCrypto

// libFuzzer target over the COSE parsers: every input is read as a COSE_Sign1, a
// COSE_Mac0 and a COSE_Key, and whatever parses is verified with fixed keys and
// re-encoded. Any outcome other than a crash is acceptable.

/// Key "11" of the cose-wg examples (P-256), so seeds taken from those examples verify.
private let fixedPublicKey: PublicKey? = try? COSEKey(parameters: .ec2(
    curve: .p256,
    x: [0xba, 0xc5, 0xb1, 0x1c, 0xad, 0x8f, 0x99, 0xf9, 0xc7, 0x2b, 0x05, 0xcf, 0x4b, 0x9e, 0x26, 0xd2,
        0x44, 0xdc, 0x18, 0x9f, 0x74, 0x52, 0x28, 0x25, 0x5a, 0x21, 0x9a, 0x86, 0xd6, 0xa0, 0x9e, 0xff],
    y: .value([0x20, 0x13, 0x8b, 0xf8, 0x2d, 0xc1, 0xb6, 0xd5, 0x62, 0xbe, 0x0f, 0xa5, 0x4a, 0xb7, 0x80, 0x4a,
               0x3a, 0x64, 0xb6, 0xd7, 0x2c, 0xcf, 0xed, 0x6b, 0x6f, 0xb6, 0xed, 0x28, 0xbb, 0xfc, 0x11, 0x7e]),
    d: nil)).publicKey()

/// The "our-secret" HMAC key of the cose-wg examples.
private let fixedMACKey = SymmetricKey(bytes: [
    0x84, 0x9b, 0x57, 0x21, 0x9d, 0xae, 0x48, 0xde, 0x64, 0x6d, 0x07, 0xdb, 0xb5, 0x33, 0x56, 0x6e,
    0x97, 0x66, 0x86, 0x45, 0x7c, 0x14, 0x91, 0xbe, 0x3a, 0x76, 0xdc, 0xea, 0x6c, 0x42, 0x71, 0x88,
])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    if let message = try? COSESign1(encoded: bytes) {
        if let key = fixedPublicKey {
            _ = try? message.verify(publicKey: key)
            _ = try? message.verify(publicKey: key, externalAAD: [1], detachedPayload: [2])
        }
        _ = try? message.x5chain()
        _ = try? message.headers.algorithm()
        _ = message.headers.keyID
        _ = message.headers.contentType
        _ = message.cbor.encoded()
        _ = try? COSESign1(encoded: message.encodedBytes)
    }

    if let message = try? COSEMac0(encoded: bytes) {
        _ = try? message.verify(key: fixedMACKey)
        _ = try? message.verify(key: fixedMACKey, detachedPayload: [])
        _ = try? message.toBeMACed()
        _ = message.cbor.encoded()
    }

    if let key = try? COSEKey(encoded: bytes) {
        _ = try? key.publicKey()
        _ = try? key.ecPrivateKey()
        _ = try? key.ed25519PrivateKey()
        _ = key.description
        _ = try? COSEKey(encoded: key.encoded())
        if let symmetric = key.symmetricKey {
            _ = try? COSEMac0.create(payload: bytes, key: symmetric)
        }
    }
    return 0
}
