/// Exact conversions between IEEE 754 widths, done on bit patterns so they behave the
/// same on every platform (Float16 is missing on macOS x86_64).
enum FloatBits {
    /// Widens binary16 bits to a Double (exact; NaN payloads preserved).
    static func double(fromHalf bits: UInt16) -> Double {
        let sign: UInt64 = UInt64(bits >> 15) << 63
        let exponent = Int((bits >> 10) & 0x1F)
        let mantissa = UInt64(bits & 0x3FF)
        switch exponent {
        case 0:
            // Subnormal or zero: mantissa * 2^-24 (RFC 8949 Appendix D).
            let magnitude = Double(mantissa) * 0x1p-24
            return sign != 0 ? -magnitude : magnitude
        case 0x1F:
            return Double(bitPattern: sign | 0x7FF0_0000_0000_0000 | (mantissa << 42))
        default:
            let biased = UInt64(exponent - 15 + 1023)
            return Double(bitPattern: sign | (biased << 52) | (mantissa << 42))
        }
    }

    /// The Float holding exactly `value`, or nil when binary32 cannot.
    static func exactFloat(_ value: Double) -> Float? {
        if value.isNaN {
            let bits = value.bitPattern
            let mantissa = bits & 0x000F_FFFF_FFFF_FFFF
            guard mantissa & 0x1FFF_FFFF == 0 else { return nil }
            let sign = UInt32(truncatingIfNeeded: bits >> 63) << 31
            return Float(bitPattern: sign | 0x7F80_0000 | UInt32(truncatingIfNeeded: mantissa >> 29))
        }
        let single = Float(value)
        return Double(single) == value ? single : nil
    }

    /// The binary16 bits holding exactly `value`, or nil when binary16 cannot.
    static func exactHalfBits(_ value: Float) -> UInt16? {
        let bits = value.bitPattern
        let sign = UInt16(truncatingIfNeeded: bits >> 31) << 15
        let exponent = Int((bits >> 23) & 0xFF)
        let mantissa = bits & 0x7F_FFFF
        if exponent == 0xFF {
            guard mantissa & 0x1FFF == 0 else { return nil }
            return sign | 0x7C00 | UInt16(truncatingIfNeeded: mantissa >> 13)
        }
        if exponent == 0 {
            // Zero stays zero; binary32 subnormals are far below binary16's range.
            return mantissa == 0 ? sign : nil
        }
        let unbiased = exponent - 127
        if unbiased >= -14 && unbiased <= 15 {
            guard mantissa & 0x1FFF == 0 else { return nil }
            return sign | UInt16(unbiased + 15) << 10 | UInt16(truncatingIfNeeded: mantissa >> 13)
        }
        if unbiased >= -24 && unbiased < -14 {
            // binary16 subnormal: value = m * 2^-24 with m < 1024.
            let full = mantissa | 0x80_0000
            let shift = UInt32(-(unbiased + 1))
            guard full & ((1 << shift) - 1) == 0 else { return nil }
            return sign | UInt16(truncatingIfNeeded: full >> shift)
        }
        return nil
    }
}
