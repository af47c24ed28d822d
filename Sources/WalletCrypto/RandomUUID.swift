import Foundation

extension SystemRandom {
    /// A random UUID (RFC 9562 version 4) drawn from libcrypto's DRBG.
    ///
    /// Foundation's `UUID()` opens and reads `/dev/urandom` for each one on Linux (about
    /// 5 µs, two system calls beside the read); the SDK's engagement, key and log
    /// identifiers come from here instead. Falls back to `UUID()` should the DRBG fail.
    public func uuid() -> UUID {
        guard var bytes = try? bytes(count: 16) else { return UUID() }
        bytes[6] = bytes[6] & 0x0F | 0x40   // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80   // variant 10
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
