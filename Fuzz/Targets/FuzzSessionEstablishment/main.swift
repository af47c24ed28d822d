import Mdoc
import WalletCrypto

// libFuzzer target over SessionEstablishment and SessionData: parse, then try to decrypt
// the data with a fixed key and the reader's counter-1 IV, and open a SessionData as each
// side's session would (its status, any CBOR uint, is what a peer chooses). Any outcome
// other than a crash is acceptable.

private let fixedKey = SymmetricKey(bytes: [UInt8](repeating: 0x5a, count: 32))
private let sessionKeys = SessionKeys(skReader: fixedKey, skDevice: fixedKey)
private let transcript = SessionTranscript(deviceEngagementEncoded: nil, eReaderKeyEncoded: nil, handover: .qr)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let establishment = try? SessionEstablishment(encoded: bytes) {
        _ = try? establishment.eReaderPublicKey()
        _ = try? AESGCM.open(combined: establishment.data, key: fixedKey,
                             nonce: SessionEncryption.nonce(sender: .reader, counter: 1))
        if let key = try? establishment.eReaderPublicKey() {
            _ = SessionEstablishment(eReaderKey: key, data: establishment.data).encodedBytes
        }
    }
    if let message = try? SessionData(encoded: bytes) {
        _ = message.encodedBytes
        if let payload = message.data {
            _ = try? AESGCM.open(combined: payload, key: fixedKey, nonce: SessionEncryption.nonce(sender: .mdoc, counter: 1))
        }
        for role in [SessionRole.mdoc, .reader] {
            var session = SessionEncryption(role: role, keys: sessionKeys, sessionTranscript: transcript)
            _ = try? session.open(message)
        }
    }
    return 0
}

