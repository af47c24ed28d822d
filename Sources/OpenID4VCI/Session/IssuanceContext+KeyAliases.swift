import WalletStorage

extension StoredCredential {
    /// The secure-area aliases this credential's issuance context still needs besides its
    /// instances' holder keys: the DPoP key its tokens are bound to and, while deferred,
    /// the holder keys its proofs named. What a sweep for orphan keys must keep.
    package var issuanceKeyAliases: [String] {
        guard let bytes = issuanceContext, let context = IssuanceContext(encoded: bytes) else { return [] }
        return (context.dpopKeyAlias.map { [$0] } ?? []) + context.pendingKeyAliases
    }
}

extension IssuanceRequest {
    /// The Credential Issuer Identifier the request goes to (the offer's, or the one named).
    public var credentialIssuer: String {
        switch source {
        case .offer(let offer, _): offer.credentialIssuer
        case .issuer(let issuer): issuer
        }
    }
}

/// The alias prefixes of the keys issuance sessions create in the secure area, so that a
/// sweep for keys left behind by an interrupted session touches nothing else.
package enum IssuanceKeyAlias {
    /// Holder keys (`holder-<uuid>`).
    package static let holderPrefix = "holder"
    /// DPoP keys (`dpop-<random>`).
    package static let dpopPrefix = "dpop-"
    /// Both, as the aliases begin.
    package static let prefixes = [holderPrefix + "-", dpopPrefix]
}
