import Mdoc
import WalletCrypto

// libFuzzer target over DeviceResponse and IssuerSigned: parse, re-encode from exact
// bytes, recompute digests and DeviceAuthenticationBytes. (Full verification is async
// and needs anchors; the parsers are what outside input reaches.) Any outcome other than
// a crash is acceptable.

private let transcript = SessionTranscript.openID4VP(.openID4VP(clientId: "x509_san_dns:fuzz.example", nonce: "n",
                                                                jwkThumbprint: nil, responseUri: "https://fuzz.example/r"))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let response = try? DeviceResponse(encoded: bytes) {
        _ = DeviceResponse(version: response.version, documents: response.documents, documentErrors: response.documentErrors,
                           status: response.status).encodedBytes
        for document in response.documents {
            let mso = document.issuerSigned.mobileSecurityObject
            let hash = (try? mso.hashAlgorithm()) ?? .sha256
            for space in document.issuerSigned.nameSpaces {
                for item in space.elements { _ = mso.valueDigests[space.nameSpace]?[item.item.digestID] == item.digest(hash) }
            }
            _ = try? mso.devicePublicKey()
            _ = DeviceSigned.deviceAuthenticationBytes(sessionTranscript: transcript, docType: document.docType,
                                                       nameSpaces: document.deviceSigned.nameSpaces)
        }
    }
    if let issuerSigned = try? IssuerSigned(encoded: bytes) { _ = issuerSigned.encodedBytes }
    if let mso = try? MobileSecurityObject(encoded: bytes) { _ = mso.keyAuthorizations }
    return 0
}
