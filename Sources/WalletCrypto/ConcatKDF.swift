/// The Concat KDF of NIST SP 800-56A §5.8.1 as JOSE uses it for ECDH-ES
/// (RFC 7518 §4.6.2): SHA-256 rounds over
/// `counter || Z || AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo`,
/// each variable field prefixed by its 32-bit big-endian length.
///
/// Reached through ``SharedSecret/concatKDFDerivedSymmetricKey(algorithmID:partyUInfo:partyVInfo:outputByteCount:)``.
enum ConcatKDF {
    /// Derives `keyByteCount` (1...64) bytes from the shared secret `z`.
    ///
    /// - Parameters:
    ///   - algorithmID: the `enc` value in direct key agreement (the `alg` value with key wrapping).
    ///   - partyUInfo: the decoded `apu` (empty when absent).
    ///   - partyVInfo: the decoded `apv` (empty when absent).
    static func deriveKey(
        sharedSecret z: SecretBytes, keyByteCount: Int, algorithmID: String,
        partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = []
    ) throws(CryptoError) -> SymmetricKey {
        guard keyByteCount > 0, keyByteCount <= 64 else { throw .invalidLength(.concatKDFOutput, actual: keyByteCount) }
        var otherInfo = lengthPrefixed(Array(algorithmID.utf8))
        otherInfo += lengthPrefixed(partyUInfo)
        otherInfo += lengthPrefixed(partyVInfo)
        otherInfo += bigEndian32(UInt32(keyByteCount * 8))
        var output: [UInt8] = []
        var counter: UInt32 = 1
        while output.count < keyByteCount {
            var round = bigEndian32(counter)
            z.withBytes { round += $0 }
            round += otherInfo
            var digest = HashAlgorithm.sha256.digest(round)
            wipe(&round)
            output += digest
            wipe(&digest)
            counter += 1
        }
        var key = Array(output.prefix(keyByteCount))
        wipe(&output)
        return SymmetricKey(consuming: &key)
    }

    private static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
        bigEndian32(UInt32(truncatingIfNeeded: bytes.count)) + bytes
    }
}
