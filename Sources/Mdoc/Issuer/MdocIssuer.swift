import CBOR
import COSE
import WalletCrypto

/// Mints mdocs: IssuerSignedItems with fresh random salts, the MSO over their digests,
/// and issuerAuth signed by the document signer key (ISO 18013-5 §9.1.2).
public struct MdocIssuer: Sendable {
    /// The document signer key.
    public let signer: any Signer
    /// The document signer certificate first, then intermediates (x5chain).
    public let certificateChain: [X509Certificate]
    /// Where salts and digestID orders come from.
    public let random: any RandomSource

    /// An issuer signing with `signer`, certified by `certificateChain`.
    public init(signer: any Signer, certificateChain: [X509Certificate], random: any RandomSource = SystemRandom()) {
        self.signer = signer
        self.certificateChain = certificateChain
        self.random = random
    }

    /// Issues a document.
    /// - Parameters:
    ///   - nameSpaces: the elements by namespace, in presentation order.
    ///   - deviceKey: the holder's device public key (goes into deviceKeyInfo).
    ///   - keyAuthorizations: what the device key may sign in DeviceSigned.
    /// - Throws: `keyOperation` (the signer's own failure, unchanged), `cose`, `crypto`.
    public func issue(docType: String, nameSpaces: [NameSpaced<DataElement>],
                      deviceKey: COSEKey, validity: ValidityInfo, keyAuthorizations: KeyAuthorizations? = nil,
                      digestAlgorithm: HashAlgorithm = .sha256) async throws(MdocError) -> IssuerSigned {
        var issued: [NameSpaced<IssuerSignedItemBytes>] = []
        var digests: [String: [UInt64: [UInt8]]] = [:]
        for space in nameSpaces {
            let nameSpace = space.nameSpace, elements = space.elements
            // digestIDs in a random order, so that an ID says nothing about the element (§9.1.2.5).
            let ids = try randomPermutation(elements.count)
            var items: [IssuerSignedItemBytes] = []
            var byID: [UInt64: [UInt8]] = [:]
            for (index, element) in elements.enumerated() {
                let salt: [UInt8]
                do { salt = try random.bytes(count: 32) } catch { throw .crypto(error) }
                let item = IssuerSignedItemBytes(IssuerSignedItem(digestID: ids[index], random: salt,
                                                                  elementIdentifier: element.identifier,
                                                                  elementValue: element.value))
                items.append(item)
                byID[ids[index]] = item.digest(digestAlgorithm)
            }
            issued.append(NameSpaced(nameSpace: nameSpace, elements: items))
            digests[nameSpace] = byID
        }
        let mso = try MobileSecurityObject(digestAlgorithm: digestAlgorithm, valueDigests: digests, deviceKey: deviceKey,
                                           keyAuthorizations: keyAuthorizations, docType: docType, validityInfo: validity)
        let x5chain: CBOR = certificateChain.count == 1
            ? .byteString(certificateChain[0].derEncoded) : .array(certificateChain.map { .byteString($0.derEncoded) })
        let issuerAuth: COSESign1
        do {
            issuerAuth = try await COSESign1.sign(payload: CBORSplice.embedded(mso.encodedBytes),
                                                  unprotected: COSEHeaderMap([(.x5chain, x5chain)]), tagged: false,
                                                  signer: signer)
        } catch .keyOperation(let failure) {
            throw .keyOperation(failure)
        } catch {
            throw .cose(error)
        }
        return try IssuerSigned(nameSpaces: issued, issuerAuth: issuerAuth)
    }

    private func randomPermutation(_ count: Int) throws(MdocError) -> [UInt64] {
        var ids = (0..<count).map { UInt64($0) }
        guard count > 1 else { return ids }
        let noise: [UInt8]
        do { noise = try random.bytes(count: 4 * count) } catch { throw .crypto(error) }
        for index in stride(from: count - 1, to: 0, by: -1) {
            let word = noise[4 * index..<4 * index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            ids.swapAt(index, Int(word % UInt32(index + 1)))
        }
        return ids
    }
}
