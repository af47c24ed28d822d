import COSE
import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding

/// Minting: one credential per holder key, SD-JWT VC (`cnf.jwk` = the key) or mdoc
/// (MSO `deviceKey` = the key), signed under the issuer's test PKI.
extension ReferenceIssuer {
    func mint(_ credential: IssuerCredentialConfiguration, keys: [JWK]) async throws(EndpointRefusal) -> [String] {
        let behaviour = configuration.behaviour
        let pki: IssuerTestPKI
        let issuerCertificate: X509Certificate
        if behaviour.signWithUnknownKey {
            let impostor = try impostorKeys()
            pki = impostor.pki
            issuerCertificate = try certificate(from: impostor.pki)
        } else {
            pki = self.pki
            issuerCertificate = self.issuerCertificate
        }
        let now = clock.now.timeIntervalSince1970.rounded(.down)
        let lifetime = configuration.lifetimes.credential.rounded(.down)
        let (validFrom, validUntil) = behaviour.issueExpiredCredentials
            ? (now - lifetime - 86_400, now - 86_400) : (now, now + lifetime)
        var issued: [String] = []
        for key in keys {
            let bound = behaviour.bindToWrongKey ? try freshPublicKey() : key
            let text: String
            switch credential.format {
            case .sdJwtVc(let vct, let subject, let plan):
                var claims: JSONObject = [
                    "iss": .string(credentialIssuer),
                    "iat": .integer(Int64(validFrom)),
                    "nbf": .integer(Int64(validFrom)),
                    "exp": .integer(Int64(validUntil)),
                    "vct": .string(behaviour.issueWrongCredentialType ? vct + ".invalid" : vct),
                ]
                for (name, value) in subject { claims[name] = value }
                let x5c = configuration.sdJwtKeyResolution == .x5c
                let issuer = SDJWTIssuer(signer: SoftwareSigner(pki.signingKey), type: "dc+sd-jwt",
                                         keyID: x5c ? nil : self.pki.signingKeyID,
                                         certificateChain: x5c ? [issuerCertificate] : nil, random: random)
                do {
                    text = try await issuer.issue(claims: claims, plan: plan, holderKey: bound).serialization
                } catch {
                    throw EndpointRefusal(status: 500, error: "server_error", description: "minting the SD-JWT VC failed")
                }
            case .msoMdoc(let docType, let nameSpaces):
                let deviceKey: COSEKey
                do { deviceKey = COSEKey(publicKey: try bound.publicKey()) } catch {
                    throw .badRequest("invalid_proof", "the proof key cannot be an mdoc device key")
                }
                let issuer = MdocIssuer(signer: SoftwareSigner(pki.documentSignerKey), certificateChain: [pki.documentSigner],
                                        random: random)
                let validity = ValidityInfo(signed: Date(timeIntervalSince1970: validFrom),
                                            validFrom: Date(timeIntervalSince1970: validFrom),
                                            validUntil: Date(timeIntervalSince1970: validUntil))
                do {
                    let document = try await issuer.issue(
                        docType: behaviour.issueWrongCredentialType ? docType + ".invalid" : docType,
                        nameSpaces: nameSpaces,
                        deviceKey: deviceKey, validity: validity, keyAuthorizations: credential.keyAuthorizations)
                    text = Base64URL.encode(document.encodedBytes)
                } catch {
                    throw EndpointRefusal(status: 500, error: "server_error", description: "minting the mdoc failed")
                }
            }
            issued.append(text)
            record.issuedCredentials.append(IssuerInspection.IssuedCredential(
                configurationId: credential.id, format: credential.format.identifier, credential: text, boundKey: bound))
        }
        return issued
    }

    private func impostorKeys() throws(EndpointRefusal) -> ImpostorKeys {
        if let impostor { return impostor }
        do {
            let made = try ImpostorKeys.generate(now: clock.now)
            impostor = made
            return made
        } catch {
            throw EndpointRefusal(status: 500, error: "server_error", description: "key generation failed")
        }
    }

    private func certificate(from pki: IssuerTestPKI) throws(EndpointRefusal) -> X509Certificate {
        do { return try pki.issuerCertificate(for: credentialIssuer) } catch {
            throw EndpointRefusal(status: 500, error: "server_error", description: "certificate generation failed")
        }
    }

    private func freshPublicKey() throws(EndpointRefusal) -> JWK {
        do { return JWK(publicKey: try ECPrivateKey.generate(curve: .p256).publicKey) } catch {
            throw EndpointRefusal(status: 500, error: "server_error", description: "key generation failed")
        }
    }
}
