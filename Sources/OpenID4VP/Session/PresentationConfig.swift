import Foundation
import WalletCrypto
import WalletEncoding

/// How the presentation client trusts verifiers and answers them.
public struct PresentationConfig: Sendable {
    /// Reader trust anchors (DER certificates). When set, a signed request must chain to
    /// one of them, verify, and bind its client identifier to the certificate, or the
    /// session fails `.verifierNotTrusted` before consent. When empty, signed requests
    /// still have their signature and client identifier binding checked, and resolve
    /// with `verifier.trusted == false`.
    public var readerAnchorsDer: [[UInt8]]
    /// Maps an mdoc-bound transaction data entry to the device-signed element that
    /// authorises it; without it such entries are refused with `invalid_transaction_data`.
    public var mdocTransactionDataBinder: MdocTransactionDataBinder?
    /// The transaction data types the app can show its user and confirm. When set, a
    /// request carrying an entry of another type is refused with `invalid_transaction_data`
    /// before the user sees it (OpenID4VP 1.0 §8.4: the wallet returns an error for a
    /// type it does not support). Nil (the default) lets any type reach consent for
    /// SD-JWT VC, hashed into the KB-JWT; an app that does not set it must show
    /// `request.transactionData` as it comes, whatever its type.
    public var transactionDataTypes: Set<String>?
    /// Accept `http` URLs (request URIs, response URIs, origins) on loopback hosts, for
    /// local development and tests. Never any other host.
    public var allowHTTP: Bool
    /// `aud` values that name this wallet in request objects, besides the static
    /// `https://self-issued.me/v2` (OpenID4VP 1.0 §5.8).
    public var walletAudiences: [String]
    /// The tolerance on request object `exp`, `nbf` and `iat`.
    public var clockSkew: TimeInterval
    /// How long each request to the verifier (fetching the request object, posting the
    /// response or the error) may go unanswered before the session fails.
    public var requestTimeout: Duration

    /// A configuration; the defaults trust no reader, bind no mdoc transaction data and
    /// allow `https` only.
    public init(readerAnchorsDer: [[UInt8]] = [], mdocTransactionDataBinder: MdocTransactionDataBinder? = nil,
                transactionDataTypes: Set<String>? = nil, allowHTTP: Bool = false, walletAudiences: [String] = [],
                clockSkew: TimeInterval = 60, requestTimeout: Duration = .seconds(30)) {
        self.readerAnchorsDer = readerAnchorsDer
        self.mdocTransactionDataBinder = mdocTransactionDataBinder
        self.transactionDataTypes = transactionDataTypes
        self.allowHTTP = allowHTTP
        self.walletAudiences = walletAudiences
        self.clockSkew = clockSkew
        self.requestTimeout = requestTimeout
    }

    /// The wallet metadata sent with `request_uri_method=post` (OpenID4VP 1.0 §10): what
    /// this wallet presents, verifies and encrypts with.
    public static let walletMetadata: JSONObject = [
        "vp_formats_supported": [
            "dc+sd-jwt": [
                "sd-jwt_alg_values": ["ES256", "ES384", "ES512", "EdDSA"],
                "kb-jwt_alg_values": ["ES256", "ES384", "ES512", "EdDSA"],
            ],
            "mso_mdoc": [
                // COSE: ES256, ES384, ES512, EdDSA, and the fully specified ESP256/384/512.
                "issuerauth_alg_values": [-7, -35, -36, -8, -9, -51, -52],
                "deviceauth_alg_values": [-7, -35, -36, -8, -9, -51, -52],
            ],
        ],
        "client_id_prefixes_supported": ["x509_san_dns", "x509_hash", "redirect_uri"],
        "response_types_supported": ["vp_token"],
        "response_modes_supported": ["direct_post", "direct_post.jwt", "dc_api", "dc_api.jwt"],
        "request_object_signing_alg_values_supported": ["ES256", "ES384", "ES512", "EdDSA"],
        "authorization_encryption_alg_values_supported": ["ECDH-ES"],
        "authorization_encryption_enc_values_supported": ["A128GCM", "A192GCM", "A256GCM"],
    ]
}
