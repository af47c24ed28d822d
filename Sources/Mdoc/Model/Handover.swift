import CBOR
import WalletCrypto

/// The third element of a SessionTranscript: how the session was set up.
public enum Handover: Sendable, Hashable {
    /// QR engagement: `null` (ISO 18013-5 §9.1.5.1).
    case qr
    /// NFC static or negotiated handover: `[HandoverSelect, HandoverRequest / null]`, the
    /// NDEF messages as exchanged (§9.1.5.1).
    case nfc(handoverSelect: [UInt8], handoverRequest: [UInt8]?)
    /// Reverse engagement (the mdoc scanned the reader's ReaderEngagement):
    /// `ReaderEngagementBytes = #6.24(bstr .cbor ReaderEngagement)`, the reader's
    /// engagement exactly as received. ISO/IEC 18013-7 uses ReaderEngagementBytes as the
    /// handover when a ReaderEngagement started the session and neither QR nor NFC
    /// handover applies; ``ReaderEngagement/encodedBytes`` goes in unchanged.
    case reverseEngagement(readerEngagementEncoded: [UInt8])
    /// OpenID4VP over redirects (OpenID4VP 1.0 Appendix B.2.6.1):
    /// `["OpenID4VPHandover", SHA-256(OpenID4VPHandoverInfoBytes)]` with the info
    /// `[clientId, nonce, jwkThumbprint / null, responseUri]`.
    case openID4VP(clientId: String, nonce: String, jwkThumbprint: [UInt8]?, responseUri: String)
    /// OpenID4VP over the Digital Credentials API (OpenID4VP 1.0 Appendix B.2.6.2):
    /// `["OpenID4VPDCAPIHandover", SHA-256(OpenID4VPDCAPIHandoverInfoBytes)]` with the
    /// info `[origin, nonce, jwkThumbprint / null]`.
    case openID4VPDCAPI(origin: String, nonce: String, jwkThumbprint: [UInt8]?)
    /// Any other handover, kept as its CBOR value (for example a parsed OpenID4VP
    /// handover, whose info is only present as a hash).
    case other(CBOR)

    /// The handover info array of the OpenID4VP handovers, encoded; nil for the others.
    public var handoverInfoBytes: [UInt8]? {
        switch self {
        case .openID4VP(let clientId, let nonce, let thumbprint, let responseUri):
            return CBOR.array([.textString(clientId), .textString(nonce), thumbprint.map(CBOR.byteString) ?? .null,
                               .textString(responseUri)]).encoded()
        case .openID4VPDCAPI(let origin, let nonce, let thumbprint):
            return CBOR.array([.textString(origin), .textString(nonce), thumbprint.map(CBOR.byteString) ?? .null]).encoded()
        default:
            return nil
        }
    }

    /// The handover as CBOR.
    public var cbor: CBOR {
        switch self {
        case .qr: return .null
        case .nfc(let select, let request): return [.byteString(select), request.map(CBOR.byteString) ?? .null]
        case .reverseEngagement(let encoded): return .tagged(24, .byteString(encoded))
        case .openID4VP:
            return ["OpenID4VPHandover", .byteString(HashAlgorithm.sha256.digest(handoverInfoBytes ?? []))]
        case .openID4VPDCAPI:
            return ["OpenID4VPDCAPIHandover", .byteString(HashAlgorithm.sha256.digest(handoverInfoBytes ?? []))]
        case .other(let value): return value
        }
    }

    init(parsed value: CBOR) {
        switch value {
        case .null: self = .qr
        case .tagged(24, .byteString(let encoded)): self = .reverseEngagement(readerEngagementEncoded: encoded)
        case .array(let parts) where parts.count == 2:
            if case .byteString(let select) = parts[0] {
                switch parts[1] {
                case .byteString(let request): self = .nfc(handoverSelect: select, handoverRequest: request); return
                case .null: self = .nfc(handoverSelect: select, handoverRequest: nil); return
                default: break
                }
            }
            self = .other(value)
        default: self = .other(value)
        }
    }
}
