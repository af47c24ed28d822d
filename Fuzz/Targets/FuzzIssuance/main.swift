import Foundation
import OpenID4VCI
import WalletEncoding

// libFuzzer entry for what an issuer sends a wallet before anything is trusted: a
// Credential Offer object and Credential Issuer Metadata. Any input parses or fails
// with a typed error; nothing traps. The first byte picks the parser.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first, let object = try? JSONValue.parseObject(bytes.dropFirst()) else { return 0 }
    if selector % 2 == 0 {
        if let offer = try? CredentialOfferObject(json: object) {
            _ = offer.preAuthorizedCode?.txCode
        }
    } else if let metadata = try? CredentialIssuerMetadata(
        json: object, credentialIssuer: "https://issuer.example", allowHTTP: true, now: Date(timeIntervalSince1970: 1_700_000_000)) {
        for id in metadata.configurationIds { _ = metadata.configuration(id)?.storedFormat }
    }
    return 0
}
