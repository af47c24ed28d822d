import WalletCrypto

/// The ephemeral P-256 keys of engagements (EDeviceKey, EReaderKey; ISO 18013-5 §9.1.1.4).
enum EphemeralKey {
    static func generate() throws(ProximityError) -> ECPrivateKey {
        do { return try ECPrivateKey.generate(curve: .p256) } catch { throw .transportFailed(.keyGeneration(error)) }
    }
}
