internal import CZlib

/// Raw DEFLATE (RFC 1951) for JWE `zip: DEF` (RFC 7516 §4.1.3), through zlib.
enum Deflate {
    static func compress(_ input: [UInt8]) throws(JOSEError) -> [UInt8] {
        var stream = z_stream()
        guard wallet_deflateInit2(&stream, Z_DEFAULT_COMPRESSION) == Z_OK else { throw .compressionFailed }
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var source = input
        let status: Int32 = source.withUnsafeMutableBufferPointer { sourceBuffer in
            stream.next_in = sourceBuffer.baseAddress
            stream.avail_in = uInt(sourceBuffer.count)
            var result: Int32 = Z_OK
            repeat {
                result = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    return deflate(&stream, Z_FINISH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk.prefix(produced))
            } while result == Z_OK
            return result
        }
        guard status == Z_STREAM_END else { throw .compressionFailed }
        return output
    }

    /// Inflates `input`, throwing `decompressedSizeExceeded` as soon as the output
    /// would pass `limit` bytes (so a small "zip bomb" cannot exhaust memory).
    static func decompress(_ input: [UInt8], limit: Int) throws(JOSEError) -> [UInt8] {
        var stream = z_stream()
        guard wallet_inflateInit2(&stream) == Z_OK else { throw .compressionFailed }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var source = input
        var exceeded = false
        let status: Int32 = source.withUnsafeMutableBufferPointer { sourceBuffer in
            stream.next_in = sourceBuffer.baseAddress
            stream.avail_in = uInt(sourceBuffer.count)
            var result: Int32 = Z_OK
            while true {
                result = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > limit { exceeded = true; return result }
                output.append(contentsOf: chunk.prefix(produced))
                if result != Z_OK { return result }
                if produced == 0 && stream.avail_in == 0 { return Z_BUF_ERROR }
            }
        }
        if exceeded { throw .decompressedSizeExceeded(limit: limit) }
        guard status == Z_STREAM_END else { throw .malformed(.invalidCompressedContent) }
        guard stream.avail_in == 0 else { throw .malformed(.invalidCompressedContent) }
        return output
    }
}
