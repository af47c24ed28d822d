import Foundation

extension CBOR {
    /// Decodes exactly one data item that spans all of `bytes`.
    ///
    /// Indefinite-length items decode to ordinary (definite) values; re-encoding them
    /// yields definite lengths. Use ``decodeItem(_:options:)`` to keep the bytes received.
    /// - Throws: ``CBORError`` with the offset of the first problem, including
    ///   ``CBORError/trailingBytes(offset:)`` when bytes follow the item.
    public static func decode(_ bytes: [UInt8], options: CBORDecodingOptions = .default) throws(CBORError) -> CBOR {
        let (value, used) = try decodePrefix(bytes, options: options)
        guard used == bytes.count else { throw .trailingBytes(offset: used) }
        return value
    }

    /// Decodes exactly one data item that spans all of `data`.
    public static func decode(_ data: Data, options: CBORDecodingOptions = .default) throws(CBORError) -> CBOR {
        try decode([UInt8](data), options: options)
    }

    /// Decodes the first data item of `bytes` and reports how many bytes it used, for
    /// reading CBOR sequences (RFC 8742) or streams.
    public static func decodePrefix(_ bytes: [UInt8], options: CBORDecodingOptions = .default) throws(CBORError) -> (value: CBOR, byteCount: Int) {
        guard bytes.count <= options.maxInputSize else { throw .inputTooLarge(size: bytes.count) }
        var parser = CBORParser(bytes: bytes, start: 0, end: bytes.count, options: options, recordNodes: false)
        let value = try parser.parseItem(depth: 0)
        return (value, parser.position)
    }

    /// Decodes a CBOR sequence (RFC 8742): zero or more items back to back.
    /// ``CBORDecodingOptions/maxItems`` applies to each item separately.
    public static func decodeSequence(_ bytes: [UInt8], options: CBORDecodingOptions = .default) throws(CBORError) -> [CBOR] {
        guard bytes.count <= options.maxInputSize else { throw .inputTooLarge(size: bytes.count) }
        var values: [CBOR] = []
        var offset = 0
        while offset < bytes.count {
            var parser = CBORParser(bytes: bytes, start: offset, end: bytes.count, options: options, recordNodes: false)
            values.append(try parser.parseItem(depth: 0))
            offset = parser.position
        }
        return values
    }

    /// Decodes exactly one data item spanning `bytes` and keeps, for it and every item
    /// inside it, the exact bytes received. Use this for anything that is signed or
    /// hashed (COSE, mdoc `IssuerSignedItemBytes`, `DeviceAuthentication`).
    public static func decodeItem(_ bytes: [UInt8], options: CBORDecodingOptions = .default) throws(CBORError) -> CBORItem {
        let item = try decodeItemPrefix(bytes, options: options)
        guard item.byteRange.upperBound == bytes.count else {
            throw .trailingBytes(offset: item.byteRange.upperBound)
        }
        return item
    }

    /// Decodes exactly one data item spanning `bytes`, keeping the exact bytes received, as
    /// ``decodeItem(_:options:)`` does, and adds what the decoding cost to `work` (also
    /// when it fails): the input bytes examined, and the bytes allocated for the node
    /// table, copied string content and container storage. For callers that bound their
    /// total work, such as `wallet inspect` (issue 12).
    public static func decodeItem(_ bytes: [UInt8], options: CBORDecodingOptions = .default,
                                  work: inout CBORWork) throws(CBORError) -> CBORItem {
        guard bytes.count <= options.maxInputSize else { throw .inputTooLarge(size: bytes.count) }
        let item = try CBORItem.parse(bytes, start: 0, end: bytes.count, options: options, work: &work)
        guard item.byteRange.upperBound == bytes.count else {
            throw .trailingBytes(offset: item.byteRange.upperBound)
        }
        return item
    }

    /// Decodes exactly one data item spanning `data`, keeping the exact bytes received.
    public static func decodeItem(_ data: Data, options: CBORDecodingOptions = .default) throws(CBORError) -> CBORItem {
        try decodeItem([UInt8](data), options: options)
    }

    /// Decodes the first data item of `bytes`, keeping the exact bytes received; its
    /// ``CBORItem/byteRange`` tells how many bytes it used.
    public static func decodeItemPrefix(_ bytes: [UInt8], options: CBORDecodingOptions = .default) throws(CBORError) -> CBORItem {
        guard bytes.count <= options.maxInputSize else { throw .inputTooLarge(size: bytes.count) }
        return try CBORItem.parse(bytes, start: 0, end: bytes.count, options: options)
    }
}
