internal import COpenSSL

/// An ECDSA signature (r, s), convertible between the raw fixed-width r||s form
/// (JOSE, COSE) and the DER `ECDSA-Sig-Value` form (X.509).
public struct ECDSASignature: Sendable, Equatable {
    /// r as a minimal big-endian unsigned integer.
    let r: [UInt8]
    /// s as a minimal big-endian unsigned integer.
    let s: [UInt8]
    /// The DER `SEQUENCE { INTEGER r, INTEGER s }`.
    public let derRepresentation: [UInt8]

    /// Parses raw r||s; the length must be exactly 2 × `curve.coordinateByteCount`.
    public init(rawRepresentation: [UInt8], curve: ECCurve) throws(CryptoError) {
        let n = curve.coordinateByteCount
        guard rawRepresentation.count == 2 * n else {
            throw .invalidLength(.ecdsaSignature(curve), actual: rawRepresentation.count)
        }
        try self.init(r: Array(rawRepresentation[..<n]), s: Array(rawRepresentation[n...]))
    }

    /// Parses a strict DER `ECDSA-Sig-Value`; BER variants, negative integers and trailing
    /// bytes are rejected with `CryptoError.malformedEncoding`.
    public init(derRepresentation der: [UInt8]) throws(CryptoError) {
        guard !der.isEmpty, der.count <= 4096 else { throw .malformedEncoding(.ecdsaSignature) }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            ERR_clear_error()
            throw .malformedEncoding(.ecdsaSignature)
        }
        defer { ECDSA_SIG_free(parsed) }
        guard let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed),
              BN_is_negative(r) == 0, BN_is_negative(s) == 0
        else { throw .malformedEncoding(.ecdsaSignature) }
        let rBytes = try Self.bytes(of: r)
        let sBytes = try Self.bytes(of: s)
        try self.init(r: rBytes, s: sBytes)
        // Re-encoding must reproduce the input exactly: this rejects BER forms and trailing data.
        guard derRepresentation == der else { throw .malformedEncoding(.ecdsaSignature) }
    }

    private init(r rawR: [UInt8], s rawS: [UInt8]) throws(CryptoError) {
        let r = Array(rawR.drop(while: { $0 == 0 }))
        let s = Array(rawS.drop(while: { $0 == 0 }))
        guard r.count <= 66, s.count <= 66 else {
            throw .malformedEncoding(.ecdsaSignature)
        }
        self.r = r
        self.s = s
        self.derRepresentation = try Self.encodeDER(r: r, s: s)
    }

    /// The raw r||s form for `curve`: each half left-padded to `curve.coordinateByteCount`.
    /// Throws `CryptoError.invalidSignature` if r or s does not fit the curve.
    public func rawRepresentation(curve: ECCurve) throws(CryptoError) -> [UInt8] {
        let n = curve.coordinateByteCount
        guard r.count <= n, s.count <= n else { throw .invalidSignature }
        return [UInt8](repeating: 0, count: n - r.count) + r + [UInt8](repeating: 0, count: n - s.count) + s
    }

    private static func bytes(of bignum: OpaquePointer) throws(CryptoError) -> [UInt8] {
        let count = (Int(BN_num_bits(bignum)) + 7) / 8
        guard count <= 66 else { throw .malformedEncoding(.ecdsaSignature) }
        var output = [UInt8](repeating: 0, count: count)
        if count > 0 { _ = BN_bn2bin(bignum, &output) }
        return output
    }

    private static func encodeDER(r: [UInt8], s: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let signature = ECDSA_SIG_new() else { throw backendError(.signatureEncoding) }
        defer { ECDSA_SIG_free(signature) }
        guard let rBN = withBytes(r, { pointer, count in BN_bin2bn(pointer, Int32(count), nil) }) else {
            throw backendError(.signatureEncoding)
        }
        guard let sBN = withBytes(s, { pointer, count in BN_bin2bn(pointer, Int32(count), nil) }) else {
            BN_free(rBN)
            throw backendError(.signatureEncoding)
        }
        guard ECDSA_SIG_set0(signature, rBN, sBN) == 1 else {
            BN_free(rBN)
            BN_free(sBN)
            throw backendError(.signatureEncoding)
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { throw backendError(.signatureEncoding) }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        guard written == length else { throw backendError(.signatureEncoding) }
        return output
    }
}
