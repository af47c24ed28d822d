import WalletEncoding

// libFuzzer entry for the strict form/query decoder: any input either decodes or
// fails with a FormURLEncodingError, and whatever decodes survives a round trip
// through the encoder unchanged (the encoder's output always decodes).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let parameters = try? FormURLEncoding.decode(bytes, maxFields: 64) else { return 0 }
    let encoded = parameters.encoded
    guard let again = try? FormURLEncoding.decode(encoded, maxFields: 64), again == parameters else {
        fatalError("form round trip changed \(bytes)")
    }
    _ = parameters.duplicatedNames
    return 0
}
