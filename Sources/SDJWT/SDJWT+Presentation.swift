import JOSE
import WalletCrypto

extension SDJWT {
    /// The disclosures a presentation of `paths` needs, in their issued order: for each
    /// claim a path selects, the disclosures of its parents and of everything inside it;
    /// nothing else (OpenID4VP 1.0 §7.3 claims path semantics).
    public func disclosures(for paths: [ClaimPath]) throws(SDJWTError) -> [Disclosure] {
        let processed = try processed()
        return try processed.disclosureIndices(for: paths).map { disclosures[$0] }
    }

    /// An unbound presentation (no KB-JWT) disclosing only what `paths` need.
    public func presentation(disclosing paths: [ClaimPath]) throws(SDJWTError) -> SDJWT {
        SDJWT(reusingIssuerJWTOf: self, disclosures: try disclosures(for: paths))
    }

    /// A presentation disclosing only what `paths` need, with a Key Binding JWT signed by
    /// `signer` (RFC 9901 §4.3): `typ` `kb+jwt`, `iat`, `aud`, `nonce`, `sd_hash`, and
    /// `transaction_data_hashes` when the parameters carry transaction data. The signer
    /// must hold the key of `cnf.jwk` when the credential names one.
    public func presentation(disclosing paths: [ClaimPath], keyBinding: KeyBindingParameters,
                             signer: any Signer) async throws(SDJWTError) -> SDJWT {
        let unbound = try presentation(disclosing: paths)
        return try await unbound.bound(with: keyBinding, signer: signer)
    }

    /// This SD-JWT's disclosures (all of them, as they are) with a new KB-JWT.
    public func bound(with keyBinding: KeyBindingParameters, signer: any Signer) async throws(SDJWTError) -> SDJWT {
        try checkHolderKey(of: signer)
        let claims = try keyBinding.claims(sdHash: sdHash)
        let jwt: JWT
        do {
            jwt = try await JWT.sign(claims: claims, signer: signer, type: keyBindingType)
        } catch .keyOperation(let failure) {
            throw .keyOperation(failure)
        } catch {
            throw .signingFailed(error)
        }
        return SDJWT(reusingIssuerJWTOf: self, disclosures: disclosures, keyBindingJWTString: jwt.compactSerialization,
                     keyBindingJWT: jwt)
    }

    /// Throws unless `signer` holds the key of `cnf.jwk` (when the credential names one).
    /// The holder key is read expecting the signer's key, so the common case (it is) needs
    /// no second import of the point.
    private func checkHolderKey(of signer: any Signer) throws(SDJWTError) {
        let holderKey: JWK?
        do {
            holderKey = try payload.confirmationKey(expecting: signer.publicKey)
        } catch {
            throw .keyBinding(.invalidHolderKey(error))
        }
        if let holderKey {
            guard (try? holderKey.publicKey()) == signer.publicKey else { throw .keyBinding(.holderKeyMismatch) }
        }
    }
}
