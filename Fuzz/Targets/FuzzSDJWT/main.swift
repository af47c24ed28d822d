import Foundation
import JOSE
import SDJWT
import WalletEncoding

// libFuzzer entry for SD-JWT: the input is parsed as a compact SD-JWT (and as a single
// disclosure and a claims path), processed with its disclosures, selected for a few claim
// paths, and verified end to end with a fixed issuer key and key-binding expectation, so
// the digest bookkeeping, recursion limits and KB-JWT checks run on hostile input. Any
// thrown SDJWTError is fine; a crash or a hang is not.

/// The RFC 9901 App. A.5 issuer key (public), the key of the seed corpus.
private let issuerKey: JWK? = try? JWK(json: """
    {"kty":"EC","crv":"P-256","x":"b28d4MwZMjw8-00CG4xfnn9SLMVMM19SlqZpVb_uNtQ","y":"Xv5zWwuoaTgdS6hV43yI6gBwTnjukmFQQnJ_kCxzqk8"}
    """)

private let paths: [ClaimPath] = [["address", "street_address"], ["nationalities", nil], ["a", 0, "b"], ["given_name"]]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)

    _ = try? Disclosure(encoded: text)
    if let json = try? JSONValue.parse(bytes), let path = try? ClaimPath(json: json) {
        _ = try? path.locations(in: json.objectValue ?? [:])
    }
    guard let sdJWT = try? SDJWT(compact: text) else { return 0 }
    _ = sdJWT.sdHash
    _ = sdJWT.serialization
    if let processed = try? sdJWT.processed() {
        _ = try? processed.disclosureIndices(for: paths)
        _ = try? sdJWT.presentation(disclosing: paths)
    }
    guard let issuerKey else { return 0 }
    let moment = Date(timeIntervalSince1970: 1_748_537_244)
    for profile in [SDJWTProfile.sdJWT, .sdJWTVC] {
        let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .jwk(issuerKey), now: moment, profile: profile, acceptsLegacyVCType: true,
            keyBinding: KeyBindingExpectation(audience: "https://verifier.example.org", nonce: "1234567890",
                                              transactionData: profile == .sdJWT ? [] : ["e30"])))
        _ = try? verifier.verify(sdJWT)
    }
    return 0
}
