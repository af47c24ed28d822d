import Foundation
import Mdoc

// libFuzzer target over DeviceRequest: parse, rebuild from the parts, compute
// ReaderAuthenticationBytes and try reader authentication with no anchors. Any outcome
// other than a crash is acceptable.

private let transcript = SessionTranscript.openID4VP(.openID4VPDCAPI(origin: "https://fuzz.example", nonce: "n", jwkThumbprint: nil))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let request = try? DeviceRequest(encoded: bytes) else { return 0 }
    _ = DeviceRequest(version: request.version, docRequests: request.docRequests).encodedBytes
    for doc in request.docRequests {
        _ = DocRequest.readerAuthenticationBytes(sessionTranscript: transcript, itemsRequest: doc.itemsRequest)
        _ = doc.readerCertificate
        _ = try? doc.verifyReaderAuthentication(sessionTranscript: transcript, trustAnchors: [], at: Date(timeIntervalSince1970: 1_700_000_000))
        _ = doc.itemsRequest.requests(nameSpace: "org.iso.18013.5.1", identifier: "portrait")
    }
    return 0
}
