import Foundation
import JOSE
import WalletEncoding
import WalletRuntime

/// An SD-JWT in compact form (RFC 9901 §4): the issuer-signed JWT, the disclosures,
/// and an optional Key Binding JWT:
/// `<Issuer-signed JWT>~<Disclosure 1>~...~<Disclosure N>~[<KB-JWT>]`.
///
/// Every part keeps the exact string received, so the issuer signature, the disclosure
/// digests and `sd_hash` are computed over what was sent.
public struct SDJWT: Sendable, Equatable {
    /// The issuer-signed JWT, exactly as received.
    public let issuerSignedJWTString: String
    /// The parsed issuer-signed JWT (signature not yet checked).
    public let issuerSignedJWT: JWT
    /// The disclosures, in the order presented.
    public let disclosures: [Disclosure]
    /// The Key Binding JWT string, exactly as received, if any.
    public let keyBindingJWTString: String?
    /// The parsed Key Binding JWT, if any (signature not yet checked).
    public let keyBindingJWT: JWT?
    /// The hash of `_sd_alg` (SHA-256 when absent).
    public let hashAlgorithm: SDJWTHashAlgorithm
    /// The result of ``processed()``, once computed: matching a credential against a query
    /// and presenting it then read the payload and hash the disclosures once. Not part of
    /// equality (it follows from the parts).
    private let processedResult = LockedBox<ProcessedPayload?>(nil)
    /// ``withoutKeyBinding`` as received, for a value parsed from its compact form (the
    /// input up to its last `~`), so that `sd_hash` needs no joining. Not part of equality.
    private let receivedWithoutKeyBinding: String?

    /// Compact SD-JWTs longer than this are refused before parsing.
    public static let maximumLength = 4 * 1024 * 1024
    /// SD-JWTs with more disclosures than this are refused.
    public static let maximumDisclosureCount = 4096

    /// Parses the compact form. The issuer JWT and every disclosure must parse, `_sd_alg`
    /// must be supported; the last part is either empty or a KB-JWT.
    public init(compact: String) throws(SDJWTError) {
        guard compact.utf8.count <= Self.maximumLength else { throw .limitExceeded(.length(maximum: Self.maximumLength)) }
        guard compact.utf8BytesAll(in: 0x21...0x7E) else {
            throw .malformed(.notPrintableASCII)
        }
        // Split on the bytes, so that no grapheme clustering can merge a `~` with what follows.
        let parts = compact.compactParts(separatedBy: UInt8(ascii: "~")).map(String.init)
        guard parts.count >= 2 else { throw .malformed(.missingSeparator) }
        guard parts.count - 2 <= Self.maximumDisclosureCount else {
            throw .limitExceeded(.disclosureCount(maximum: Self.maximumDisclosureCount))
        }
        let last = parts[parts.count - 1]
        var disclosures: [Disclosure] = []
        for part in parts[1..<(parts.count - 1)] {
            guard !part.isEmpty else { throw .malformed(.emptyDisclosure) }
            disclosures.append(try Disclosure(encoded: part))
        }
        var keyBinding: JWT?
        if !last.isEmpty {
            do {
                keyBinding = try JWT(compact: last)
            } catch {
                throw .keyBinding(.invalidJWT(error))
            }
        }
        // Every part was split at a `~`, so the input up to its last `~` is exactly the
        // parts before the KB-JWT joined as ``withoutKeyBinding`` joins them.
        let received = compact.utf8.lastIndex(of: UInt8(ascii: "~")).map { String(compact[...$0]) }
        try self.init(issuerSignedJWTString: parts[0], disclosures: disclosures,
                      keyBindingJWTString: last.isEmpty ? nil : last, keyBindingJWT: keyBinding,
                      receivedWithoutKeyBinding: received)
    }

    /// Assembles an SD-JWT from its issuer-signed JWT string, disclosures and optional KB-JWT string.
    public init(issuerSignedJWT: String, disclosures: [Disclosure], keyBindingJWT: String? = nil) throws(SDJWTError) {
        var keyBinding: JWT?
        if let keyBindingJWT {
            do {
                keyBinding = try JWT(compact: keyBindingJWT)
            } catch {
                throw .keyBinding(.invalidJWT(error))
            }
        }
        try self.init(issuerSignedJWTString: issuerSignedJWT, disclosures: disclosures,
                      keyBindingJWTString: keyBindingJWT, keyBindingJWT: keyBinding)
    }

    private init(issuerSignedJWTString: String, disclosures: [Disclosure], keyBindingJWTString: String?,
                 keyBindingJWT: JWT?, receivedWithoutKeyBinding: String? = nil) throws(SDJWTError) {
        let jwt: JWT
        do {
            jwt = try JWT(compact: issuerSignedJWTString)
        } catch {
            throw .invalidIssuerJWT(error)
        }
        if let name = jwt.claims["_sd_alg"] {
            guard let text = name.stringValue else { throw .malformed(.hashAlgorithmNotString) }
            self.hashAlgorithm = try SDJWTHashAlgorithm(name: text)
        } else {
            self.hashAlgorithm = .sha256
        }
        self.issuerSignedJWTString = issuerSignedJWTString
        self.issuerSignedJWT = jwt
        self.disclosures = disclosures
        self.keyBindingJWTString = keyBindingJWTString
        self.keyBindingJWT = keyBindingJWT
        self.receivedWithoutKeyBinding = receivedWithoutKeyBinding
    }

    /// This SD-JWT's issuer-signed JWT, already parsed, with other disclosures and KB-JWT
    /// (a presentation needs no second parse of the JWT).
    init(reusingIssuerJWTOf other: SDJWT, disclosures: [Disclosure], keyBindingJWTString: String? = nil,
         keyBindingJWT: JWT? = nil) {
        self.issuerSignedJWTString = other.issuerSignedJWTString
        self.issuerSignedJWT = other.issuerSignedJWT
        self.hashAlgorithm = other.hashAlgorithm
        self.disclosures = disclosures
        self.keyBindingJWTString = keyBindingJWTString
        self.keyBindingJWT = keyBindingJWT
        self.receivedWithoutKeyBinding = nil
    }

    /// The issuer-signed JWT's payload (with `_sd` digests, before processing).
    public var payload: JWTClaims { issuerSignedJWT.claims }

    /// The SD-JWT without key binding, ending in `~`: the input of `sd_hash` (RFC 9901 §4.3.1).
    public var withoutKeyBinding: String {
        receivedWithoutKeyBinding ?? ([issuerSignedJWTString] + disclosures.map(\.encoded)).joined(separator: "~") + "~"
    }

    /// The compact serialization, with the KB-JWT if there is one.
    public var serialization: String { withoutKeyBinding + (keyBindingJWTString ?? "") }

    /// `sd_hash`: base64url(hash(`withoutKeyBinding`)) with the `_sd_alg` hash.
    public var sdHash: String { hashAlgorithm.base64URLDigest(of: withoutKeyBinding) }

    /// Processes the payload with every disclosure this SD-JWT carries (RFC 9901 §7.1
    /// steps 3-5), without checking any signature.
    ///
    /// The result is kept with this value (a failure is not), so asking again costs nothing.
    public func processed() throws(SDJWTError) -> ProcessedPayload {
        if let kept = processedResult.withLock({ $0 }) { return kept }
        let result = try ProcessedPayload(payload: payload.members, disclosures: disclosures, hashAlgorithm: hashAlgorithm)
        processedResult.withLock { $0 = result }
        return result
    }

    /// Equal when the issuer-signed JWT, the disclosures and the KB-JWT are (as received).
    public static func == (lhs: SDJWT, rhs: SDJWT) -> Bool {
        lhs.issuerSignedJWTString == rhs.issuerSignedJWTString && lhs.issuerSignedJWT == rhs.issuerSignedJWT
            && lhs.disclosures == rhs.disclosures && lhs.keyBindingJWTString == rhs.keyBindingJWTString
            && lhs.keyBindingJWT == rhs.keyBindingJWT && lhs.hashAlgorithm == rhs.hashAlgorithm
    }
}
