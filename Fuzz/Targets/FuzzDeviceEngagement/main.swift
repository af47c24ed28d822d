import Mdoc

// libFuzzer target over the engagement parsers: DeviceEngagement (bytes and the mdoc: URI
// form), ReaderEngagement and SessionTranscript. Any outcome other than a crash is acceptable.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let engagement = try? DeviceEngagement(encoded: bytes) {
        _ = try? engagement.security.ecPublicKey()
        _ = engagement.deviceRetrievalMethods.map(\.cbor)
        _ = try? DeviceEngagement(uri: engagement.uri)
        _ = SessionTranscript(deviceEngagement: engagement, eReaderKeyEncoded: engagement.security.eDeviceKeyEncoded,
                              handover: .qr).taggedBytes
    }
    if let text = String(validating: bytes, as: UTF8.self) { _ = try? DeviceEngagement(uri: text) }
    if let engagement = try? ReaderEngagement(encoded: bytes) { _ = engagement.uri }
    if let transcript = try? SessionTranscript(encoded: bytes) { _ = transcript.handover.cbor.encoded() }
    return 0
}
