import Foundation
import JOSE
import SDJWT
import Testing
import WalletCrypto
import WalletEncoding

/// Reads vectors and builds keys for the SDJWT suites.
enum TestSupport {
    /// The repository root (three levels up from this file).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file of ../shared/vectors/sdjwt parsed with the strict JSON parser.
    static func sharedVector(_ name: String) throws -> JSONValue {
        let url = root.deletingLastPathComponent().appendingPathComponent("shared/vectors/sdjwt/\(name)")
        return try JSONValue.parse([UInt8](try Data(contentsOf: url)))
    }

    /// A file of Tests/SDJWTTests/Vectors.
    static func localVector(_ name: String) throws -> JSONValue {
        let url = root.appendingPathComponent("Tests/SDJWTTests/Vectors/\(name)")
        return try JSONValue.parse([UInt8](try Data(contentsOf: url)))
    }

    /// The issuer key of RFC 9901 App. A.5 (private part as published by sd-jwt-python's settings.yml).
    static let issuerJWK = try! JWK(json: """
        {"kty":"EC","crv":"P-256","x":"b28d4MwZMjw8-00CG4xfnn9SLMVMM19SlqZpVb_uNtQ",\
        "y":"Xv5zWwuoaTgdS6hV43yI6gBwTnjukmFQQnJ_kCxzqk8","d":"Ur2bNKuBPOrAaxsRnbSH6hIhmNTxSGXshDSUD1a1y7g"}
        """)
    /// The holder key of RFC 9901 App. A.5 / sd-jwt-python's settings.yml.
    static let holderJWK = try! JWK(json: """
        {"kty":"EC","crv":"P-256","x":"TCAER19Zvu3OHF4j4W4vfSVoHIP1ILilDls7vCeGemc",\
        "y":"ZxjiWWbZMQGHVWKVQ4hbSIirsVfuecCE6t4jT9F2HZQ","d":"5K5SCos8zf9zRemGGUl6yfok-_NiiryNZsvANWMhF-I"}
        """)

    static var issuerSigner: SoftwareSigner { SoftwareSigner(try! issuerJWK.ecPrivateKey()) }
    static var holderSigner: SoftwareSigner { SoftwareSigner(try! holderJWK.ecPrivateKey()) }
    static var issuerPublicJWK: JWK { try! issuerJWK.publicJWK }
    static var holderPublicJWK: JWK { try! holderJWK.publicJWK }

    static let audience = "https://verifier.example.org"
    static let nonce = "n-0S6_WzA2Mj"
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    /// A PID-like SD-JWT VC minted by the SDK's issuer with `plan`.
    static func mint(_ claims: JSONObject, plan: DisclosurePlan, holder: JWK? = holderPublicJWK,
                     type: String = "dc+sd-jwt") async throws -> SDJWT {
        try await SDJWTIssuer(signer: issuerSigner, type: type).issue(claims: claims, plan: plan, holderKey: holder)
    }

    /// Verification options with the test issuer key at `now`.
    static func options(keyBinding: KeyBindingExpectation? = nil, profile: SDJWTProfile = .sdJWTVC,
                        at time: Date = now) -> SDJWTVerificationOptions {
        SDJWTVerificationOptions(issuerKey: .jwk(issuerPublicJWK), now: time, profile: profile, keyBinding: keyBinding)
    }

    static func object(_ value: JSONValue?) throws -> JSONObject {
        try #require(value?.objectValue)
    }
}
