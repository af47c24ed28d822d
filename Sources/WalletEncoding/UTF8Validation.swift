/// Strict UTF-8 validation (RFC 3629): rejects overlong forms, surrogates, code points
/// above U+10FFFF and truncated sequences. Written by hand so it runs on every deployment
/// target and reports where the first bad byte is. The SDK's one UTF-8 validator (CBOR text
/// strings, JSON strings, CLI input).
public enum UTF8Validation {
    /// The index of the first byte of the first invalid sequence in `bytes[start..<end]`,
    /// or nil when the range is valid UTF-8.
    public static func firstInvalidOffset(in bytes: [UInt8], from start: Int, to end: Int) -> Int? {
        precondition(start >= 0 && start <= end && end <= bytes.count, "range outside the bytes")
        return bytes.withUnsafeBufferPointer { firstInvalidOffset(in: $0, from: start, to: end) }
    }

    /// The index of the first byte of the first invalid sequence in `bytes[start..<end]`,
    /// or nil when the range is valid UTF-8; the range must lie within `bytes`.
    public static func firstInvalidOffset(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        precondition(start >= 0 && start <= end && end <= bytes.count, "range outside the bytes")
        var index = start
        while index < end {
            // ASCII runs, 8 bytes at a time.
            while end - index >= 8 {
                let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
                guard word & 0x8080_8080_8080_8080 == 0 else { break }
                index += 8
            }
            guard index < end else { break }
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            var continuationCount = 0
            var secondLow: UInt8 = 0x80
            var secondHigh: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: continuationCount = 1
            case 0xE0: continuationCount = 2; secondLow = 0xA0          // no overlongs
            case 0xE1...0xEC, 0xEE...0xEF: continuationCount = 2
            case 0xED: continuationCount = 2; secondHigh = 0x9F         // no surrogates
            case 0xF0: continuationCount = 3; secondLow = 0x90          // no overlongs
            case 0xF1...0xF3: continuationCount = 3
            case 0xF4: continuationCount = 3; secondHigh = 0x8F         // <= U+10FFFF
            default: return index
            }
            guard end - index > continuationCount else { return index }
            let second = bytes[index + 1]
            guard second >= secondLow && second <= secondHigh else { return index }
            if continuationCount >= 2 {
                for k in 2...continuationCount where bytes[index + k] & 0xC0 != 0x80 {
                    return index
                }
            }
            index += continuationCount + 1
        }
        return nil
    }

    /// The string of `bytes` when they are valid UTF-8, nil otherwise (the portable form
    /// of `String(validating:as:)`, which needs macOS 15 / iOS 18).
    public static func string(_ bytes: some Collection<UInt8>) -> String? {
        let array = Array(bytes)
        guard firstInvalidOffset(in: array, from: 0, to: array.count) == nil else { return nil }
        return String(decoding: array, as: UTF8.self)
    }
}
