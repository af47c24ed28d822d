import CBOR
import COSE
import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletStorage

/// A credential as it came in a Credential Response, parsed but not yet trusted.
enum ReceivedCredential: Sendable {
    /// An SD-JWT VC in compact form (stored as its UTF-8).
    case sdJWT(SDJWT, compact: String)
    /// An mdoc `IssuerSigned` (stored as its CBOR bytes).
    case mdoc(IssuerSigned, encoded: [UInt8])

    /// Parses one `credentials[i].credential` value of `format`.
    static func parse(_ value: JSONValue, format: CredentialFormat) throws(CredentialCheckFailure) -> ReceivedCredential {
        guard let text = value.stringValue, !text.isEmpty else { throw .malformed }
        switch format {
        case .sdJwtVc:
            do { return .sdJWT(try SDJWT(compact: text), compact: text) } catch { throw .sdJWT(error) }
        case .msoMdoc:
            // Appendix A.2.4: base64url of the IssuerSigned CBOR (padding tolerated).
            guard let bytes = Base64URL.decode(text) else { throw .malformed }
            do { return .mdoc(try IssuerSigned(encoded: bytes), encoded: bytes) } catch { throw .mdoc(error) }
        }
    }

    /// The bytes the store keeps: exactly what the issuer sent.
    var raw: [UInt8] {
        switch self {
        case .sdJWT(_, let compact): Array(compact.utf8)
        case .mdoc(_, let encoded): encoded
        }
    }

    /// For an SD-JWT VC whose issuer key must come from JWT VC Issuer Metadata, the `iss`
    /// to fetch it for (nil: the key comes from the configured anchors, or it is an mdoc).
    func issuerNeedingMetadata(anchors: [X509Certificate]) -> String? {
        guard case .sdJWT(let sdJWT, _) = self, anchors.isEmpty else { return nil }
        return sdJWT.payload.issuer
    }
}

/// The checks every credential passes before it is stored (issue 13): the issuer's
/// signature (and chain, when anchors are configured), the format's own rules and time
/// window, the configured type, and the holder key being one the wallet proved.
struct IssuedCredentialVerifier: Sendable {
    /// The configured issuer trust anchors (empty: no chain is required).
    let trustAnchors: [X509Certificate]
    /// The `vct` or `docType` the configuration names.
    let expectedType: String
    /// Verification time.
    let now: Date

    /// Verifies `credential` and returns the holder public key it is bound to.
    /// - Parameter issuerKeys: for SD-JWT VC without anchors, the keys from the issuer's
    ///   JWT VC Issuer Metadata, or why they could not be had (the `x5c` leaf is then used
    ///   when there is one).
    /// - Parameter validatedChains: issuer keys of `x5c` chains already validated in this
    ///   session, by chain and `iss`: a batch carries the same chain on every credential,
    ///   and path validation is the costliest step of a check.
    func verify(_ credential: ReceivedCredential, issuerKeys: Result<[JWK], MetadataProblem>?,
                validatedChains: inout [String: JWK]) throws(CredentialCheckFailure) -> PublicKey {
        switch credential {
        case .sdJWT(let sdJWT, _): try verifySDJWT(sdJWT, issuerKeys: issuerKeys, validatedChains: &validatedChains)
        case .mdoc(let issuerSigned, _): try verifyMdoc(issuerSigned, validatedChains: &validatedChains)
        }
    }

    /// The document signer's key, after its `x5chain` validated to the anchors under the
    /// ISO 18013-5 Annex B document-signer policy, valid when it signed the MSO.
    private func anchoredSignerKey(_ issuerSigned: IssuerSigned, validatedChains: inout [String: JWK]) throws(COSEError) -> PublicKey {
        let chainDER = issuerSigned.issuerAuth.headers.x5chainDER
        let signed = issuerSigned.mobileSecurityObject.validityInfo.signed
        let cacheKey = "mdoc\u{0}" + chainDER.map(Hex.encode).joined(separator: ".") + "\u{0}\(signed.timeIntervalSince1970)"
        if let known = validatedChains[cacheKey], let key = try? known.publicKey() { return key }
        let key: PublicKey
        do {
            let chain = try X509ChainValidator(anchors: trustAnchors).validate(
                chainDER: chainDER, at: now, policy: .mdocDocumentSigner + X509TrustPolicy([.leafValid(at: signed)]))
            key = try chain.leafPublicKey()
        } catch {
            throw .untrusted(error)
        }
        validatedChains[cacheKey] = JWK(publicKey: key)
        return key
    }

    /// The key of the SD-JWT VC's `x5c` leaf, after its chain validated to the anchors under
    /// the SD-JWT VC issuer policy (a signing certificate whose subjectAltName names `iss`).
    private func anchoredIssuerKey(_ sdJWT: SDJWT, validatedChains: inout [String: JWK]) throws(CredentialCheckFailure) -> JWK {
        let header = sdJWT.issuerSignedJWT.header
        guard let x5c = header["x5c"] else { throw .missingCertificateChain }
        let issuer = sdJWT.payload.issuer
        let cacheKey = x5c.serialized + "\u{0}" + (issuer ?? "")
        if let known = validatedChains[cacheKey] { return known }
        let certificates: [X509Certificate]
        do { certificates = try header.certificateChain() ?? [] } catch { throw .sdJWT(.invalidIssuerSignature(error)) }
        let policy = issuer.map { X509TrustPolicy.sdJWTVCIssuer($0) } ?? .signingCertificate
        let key: JWK
        do {
            let chain = try X509ChainValidator(anchors: trustAnchors).validate(chain: certificates, at: now, policy: policy)
            key = JWK(publicKey: try chain.leafPublicKey())
        } catch {
            throw .sdJWT(.untrustedIssuer(error))
        }
        validatedChains[cacheKey] = key
        return key
    }

    private func verifySDJWT(_ sdJWT: SDJWT, issuerKeys lookup: Result<[JWK], MetadataProblem>?,
                             validatedChains: inout [String: JWK]) throws(CredentialCheckFailure) -> PublicKey {
        var issuerKeys: [JWK]?
        var problem = MetadataProblem.missingEndpoint("jwks")
        switch lookup {
        case .success(let keys): issuerKeys = keys
        case .failure(let failure): problem = failure
        case nil: break
        }
        let header = sdJWT.issuerSignedJWT.header
        var sources: [IssuerKeySource] = []
        if !trustAnchors.isEmpty {
            sources = [.jwk(try anchoredIssuerKey(sdJWT, validatedChains: &validatedChains))]
        } else if let issuerKeys, !issuerKeys.isEmpty {
            // A kid selects the key; without one every published key is tried.
            let candidates = header.keyID.map { kid in issuerKeys.filter { $0.keyID == kid } } ?? issuerKeys
            // A kid the issuer does not publish: no key of its metadata can have signed it.
            guard !candidates.isEmpty else { throw .issuerKeyUnavailable(.invalidMember("jwks")) }
            sources = candidates.map { .jwk($0) }
        } else if let leaf = (try? header.certificateChain())??.first,
                  let key = try? leaf.publicKey {
            // No anchors and no metadata: the x5c leaf checks integrity only.
            sources = [.jwk(JWK(publicKey: key))]
        } else {
            throw .issuerKeyUnavailable(problem)
        }
        var verified: VerifiedSDJWT?
        var lastError: SDJWTError?
        for source in sources {
            let options = SDJWTVerificationOptions(issuerKey: source, now: now, profile: .sdJWTVC, acceptsLegacyVCType: true)
            do {
                verified = try SDJWTVerifier(options: options).verify(sdJWT)
                break
            } catch {
                lastError = error
            }
        }
        guard let verified else { throw .sdJWT(lastError ?? .invalidIssuerSignature(.invalidSignature)) }
        let type = verified.type ?? ""
        guard type == expectedType else { throw .typeMismatch(expected: expectedType, actual: type) }
        guard let holder = verified.holderKey, let key = try? holder.publicKey() else { throw .holderKeyMismatch }
        return key
    }

    private func verifyMdoc(_ issuerSigned: IssuerSigned, validatedChains: inout [String: JWK]) throws(CredentialCheckFailure) -> PublicKey {
        let issuerAuth = issuerSigned.issuerAuth
        do throws(COSEError) {
            if trustAnchors.isEmpty {
                guard let leaf = try issuerAuth.x5chain().first else { throw .invalidCertificate }
                let key: PublicKey
                do { key = try leaf.publicKey } catch { throw .invalidCertificate }
                try issuerAuth.verify(publicKey: key, requireProtectedAlgorithm: true)
            } else {
                try issuerAuth.verify(publicKey: try anchoredSignerKey(issuerSigned, validatedChains: &validatedChains),
                                      requireProtectedAlgorithm: true)
            }
        } catch {
            if case .untrusted(let failure) = error { throw .mdoc(.untrustedIssuer(failure)) }
            throw .mdoc(.issuerSignatureInvalid(error))
        }
        let mso = issuerSigned.mobileSecurityObject
        guard mso.docType == expectedType else { throw .typeMismatch(expected: expectedType, actual: mso.docType) }
        let validity = mso.validityInfo
        guard now >= validity.validFrom else { throw .mdoc(.msoNotYetValid(validFrom: validity.validFrom, at: now)) }
        guard now <= validity.validUntil else { throw .mdoc(.msoExpired(validUntil: validity.validUntil, at: now)) }
        let hash: HashAlgorithm
        do { hash = try mso.hashAlgorithm() } catch { throw .mdoc(error) }
        for space in issuerSigned.nameSpaces {
            let nameSpace = space.nameSpace
            var seen = Set<UInt64>()
            for item in space.elements {
                let id = item.item.digestID
                guard let expected = mso.valueDigests[nameSpace]?[id] else {
                    throw .mdoc(.unknownDigestID(nameSpace: nameSpace, digestID: id))
                }
                guard seen.insert(id).inserted else { throw .mdoc(.duplicateDigestID(nameSpace: nameSpace, digestID: id)) }
                guard ConstantTime.equals(item.digest(hash), expected) else {
                    throw .mdoc(.digestMismatch(nameSpace: nameSpace, elementIdentifier: item.item.elementIdentifier, digestID: id))
                }
            }
        }
        do { return try mso.devicePublicKey() } catch { throw .mdoc(error) }
    }
}

/// JWT VC Issuer Metadata (SD-JWT VC §5): where an SD-JWT VC issuer publishes its keys.
enum JWTVCIssuerMetadata {
    /// The well-known suffix.
    static let wellKnownSuffix = "jwt-vc-issuer"

    /// The URL of the metadata for `issuer` (path inserted after the host).
    static func url(for issuer: String, policy: URLPolicy) -> URL? {
        guard policy.url(issuer) != nil else { return nil }
        return URLPolicy.wellKnown(wellKnownSuffix, insertedInto: issuer)
    }

    /// What a metadata document gives: the keys inline, or where to fetch them.
    enum Keys: Equatable {
        case inline([JWK])
        case reference(URL)
    }

    /// Reads a metadata document fetched for `issuer`.
    static func keys(_ object: JSONObject, issuer: String, policy: URLPolicy) throws(MetadataProblem) -> Keys {
        let named = object["issuer"]?.stringValue
        guard named == issuer else { throw .identifierMismatch(expected: issuer, actual: named) }
        if let jwks = object["jwks"] {
            return .inline(try keySet(jwks))
        }
        if let uri = object["jwks_uri"]?.stringValue {
            guard let url = policy.url(uri) else { throw .insecureURL(uri) }
            return .reference(url)
        }
        throw .invalidMember("jwks")
    }

    /// Reads a JWK Set, keeping only public keys.
    static func keySet(_ value: JSONValue) throws(MetadataProblem) -> [JWK] {
        guard let set = try? JWKSet(value: value) else { throw .invalidMember("jwks") }
        return set.keys.filter { !$0.isPrivate }
    }
}
