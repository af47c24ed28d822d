import Foundation
import WalletStorage

/// Makes key attestations (OpenID4VCI 1.0 Appendix D) for holder keys the wallet just
/// created, when a credential configuration requires them (`key_attestations_required`).
///
/// The SDK ships ``SoftwareKeyAttestationProvider`` for keys of the software secure area;
/// an app with a hardware area supplies its own (backed by its wallet provider's service
/// and the platform's attestation evidence).
public protocol KeyAttestationProvider: Sendable {
    /// An attestation naming every key of `keys` in `attested_keys`, carrying `nonce`
    /// (the issuer's `c_nonce`) when given.
    func attest(_ keys: [KeyInfo], nonce: String?, now: Date) async throws(KeyAttestationError) -> KeyAttestation
}

/// The SDK's provider for keys of `SoftwareSecureArea`: signs with a wallet provider key
/// through ``KeyAttestationIssuer``, claiming no more than the software area gives
/// (`iso_18045_basic` at best).
public struct SoftwareKeyAttestationProvider: KeyAttestationProvider {
    /// The wallet provider's attestation issuer.
    public let issuer: KeyAttestationIssuer

    /// A provider signing with `issuer`.
    public init(issuer: KeyAttestationIssuer) { self.issuer = issuer }

    /// Attests the public keys of `keys`.
    public func attest(_ keys: [KeyInfo], nonce: String?, now: Date) async throws(KeyAttestationError) -> KeyAttestation {
        try await issuer.attest(keys.map(\.publicKey), nonce: nonce, now: now)
    }
}
