import CBOR
import COSE
import WalletCrypto

/// What a reader asks of one document (ISO 18013-5 §8.3.2.1.2.1):
/// `{"docType": tstr, "nameSpaces": {tstr => {tstr => IntentToRetain}}, ? "requestInfo": {tstr => any}}`.
public struct ItemsRequest: Sendable, Hashable {
    /// The requested document type.
    public let docType: String
    /// Requested elements by namespace, each with the reader's intent to retain, in the
    /// order received.
    public let nameSpaces: [NameSpaced<RequestedElement>]
    /// Additional request information, as decoded.
    public let requestInfo: CBORMap?
    /// The encoding (content of ItemsRequestBytes), as received or built.
    public let encodedBytes: [UInt8]

    /// Builds a request (namespaces and elements in the given order).
    public init(docType: String, nameSpaces: [NameSpaced<RequestedElement>],
                requestInfo: CBORMap? = nil) {
        self.docType = docType
        self.nameSpaces = nameSpaces
        self.requestInfo = requestInfo
        var map = CBORMap()
        map.append(key: "docType", value: .textString(docType))
        map.append(key: "nameSpaces", value: .map(CBORMap(nameSpaces.map { space in
            (CBOR.textString(space.nameSpace), CBOR.map(CBORMap(space.elements.map { (CBOR.textString($0.identifier), CBOR.boolean($0.intentToRetain)) })))
        })))
        if let requestInfo { map.append(key: "requestInfo", value: .map(requestInfo)) }
        encodedBytes = CBOR.map(map).encoded()
    }

    init(item: CBORItem) throws(MdocError) {
        docType = try item.required("docType", in: "ItemsRequest").text("ItemsRequest docType")
        var spaces: [NameSpaced<RequestedElement>] = []
        for (key, elements) in try item.required("nameSpaces", in: "ItemsRequest").requiredMap("ItemsRequest nameSpaces") {
            let name = try key.text("ItemsRequest namespace")
            var list: [RequestedElement] = []
            for (id, retain) in try elements.requiredMap("DataElements") {
                list.append(RequestedElement(identifier: try id.text("data element identifier"), intentToRetain: try retain.bool("IntentToRetain")))
            }
            spaces.append(NameSpaced(nameSpace: name, elements: list))
        }
        nameSpaces = spaces
        if let info = item["requestInfo"] {
            guard let map = info.value.mapValue else { throw .malformed("requestInfo", .wrongType(expected: .map)) }
            requestInfo = map
        } else {
            requestInfo = nil
        }
        encodedBytes = item.exactBytes
    }

    /// `ItemsRequestBytes`: `#6.24(bstr .cbor ItemsRequest)`.
    public var taggedBytes: [UInt8] { CBORSplice.embedded(encodedBytes) }

    /// True when `identifier` of `nameSpace` is requested.
    public func requests(nameSpace: String, identifier: String) -> Bool {
        nameSpaces.contains { $0.nameSpace == nameSpace && $0.elements.contains { $0.identifier == identifier } }
    }

    /// Equal when the encodings are.
    public static func == (lhs: ItemsRequest, rhs: ItemsRequest) -> Bool { lhs.encodedBytes == rhs.encodedBytes }
    /// Hashes the encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(encodedBytes) }
}

/// A reader's signing key and certificate chain, for reader authentication.
public struct ReaderAuthenticationKey: Sendable {
    /// The key that signs ReaderAuthenticationBytes.
    public let signer: any Signer
    /// The reader certificate first, then intermediates (the x5chain header).
    public let certificateChain: [X509Certificate]
    /// A reader key with its chain.
    public init(signer: any Signer, certificateChain: [X509Certificate]) {
        self.signer = signer
        self.certificateChain = certificateChain
    }
}

/// One document request: `{"itemsRequest": ItemsRequestBytes, ? "readerAuth": COSE_Sign1}`.
public struct DocRequest: Sendable, Hashable {
    /// The items request, with its exact bytes.
    public let itemsRequest: ItemsRequest
    /// The reader's signature over ReaderAuthenticationBytes (detached payload).
    public let readerAuth: COSESign1?

    /// A request without reader authentication.
    public init(itemsRequest: ItemsRequest) {
        self.itemsRequest = itemsRequest
        self.readerAuth = nil
    }

    /// A request whose readerAuth signs ReaderAuthenticationBytes for `sessionTranscript`
    /// (ISO 18013-5 §9.1.4), with the chain in x5chain (unprotected, label 33).
    public init(itemsRequest: ItemsRequest, readerKey: ReaderAuthenticationKey,
                sessionTranscript: SessionTranscript) async throws(MdocError) {
        self.itemsRequest = itemsRequest
        let chain = readerKey.certificateChain
        let x5chain: CBOR = chain.count == 1 ? .byteString(chain[0].derEncoded) : .array(chain.map { .byteString($0.derEncoded) })
        do {
            readerAuth = try await COSESign1.sign(
                payload: Self.readerAuthenticationBytes(sessionTranscript: sessionTranscript, itemsRequest: itemsRequest),
                detached: true, unprotected: COSEHeaderMap([(.x5chain, x5chain)]), tagged: false, signer: readerKey.signer)
        } catch {
            throw .cose(error)
        }
    }

    init(item: CBORItem) throws(MdocError) {
        let tagged = try item.required("itemsRequest", in: "DocRequest")
        itemsRequest = try ItemsRequest(item: try MdocDecoding.embedded(tagged, "ItemsRequestBytes"))
        if let auth = item["readerAuth"] {
            do { readerAuth = try COSESign1(item: auth) } catch { throw .cose(error) }
        } else {
            readerAuth = nil
        }
    }

    /// `ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication",
    /// SessionTranscript, ItemsRequestBytes])` (§9.1.4), from exact bytes.
    public static func readerAuthenticationBytes(sessionTranscript: SessionTranscript, itemsRequest: ItemsRequest) -> [UInt8] {
        var splice = CBORSplice()
        splice.arrayHead(3)
        splice.text("ReaderAuthentication")
        splice.raw(sessionTranscript.encodedBytes)
        splice.embedded(itemsRequest.encodedBytes)
        return CBORSplice.embedded(splice.bytes)
    }

    /// Verifies readerAuth on the holder side: the chain to `trustAnchors` at `time` under
    /// `policy` (the ISO 18013-5 reader authentication profile unless the caller asks for
    /// another), then the signature over ReaderAuthenticationBytes.
    /// - Returns: the validated reader chain, reader certificate first.
    /// - Throws: `readerAuthenticationMissing`, `untrustedReader`, `readerAuthenticationFailed`.
    @discardableResult
    public func verifyReaderAuthentication(sessionTranscript: SessionTranscript, trustAnchors: [X509Certificate],
                                           at time: Date, policy: X509TrustPolicy = .mdocReaderAuthentication)
        throws(MdocError) -> ValidatedChain {
        guard let readerAuth else { throw .readerAuthenticationMissing }
        let payload = Self.readerAuthenticationBytes(sessionTranscript: sessionTranscript, itemsRequest: itemsRequest)
        do {
            // §9.1.4: alg is a protected header of readerAuth.
            return try readerAuth.verify(trustAnchors: trustAnchors, at: time, policy: policy, detachedPayload: payload,
                                         requireProtectedAlgorithm: true)
        } catch .untrusted(let failure) {
            throw .untrustedReader(failure)
        } catch {
            throw .readerAuthenticationFailed(error)
        }
    }

    /// Verifies readerAuth's signature over ReaderAuthenticationBytes for
    /// `sessionTranscript` under the key of the certificate it carries, and nothing about
    /// that certificate: the request was signed, for this session, by whoever holds that
    /// certificate's key. It is what a holder without reader trust anchors can check, so
    /// that a request cannot borrow another reader's public certificate; with anchors,
    /// ``verifyReaderAuthentication(sessionTranscript:trustAnchors:at:policy:)`` checks the
    /// chain too.
    /// - Returns: the certificate whose key signed (the first of x5chain).
    /// - Throws: `readerAuthenticationMissing`; `readerAuthenticationFailed` (no
    ///   x5chain, an unprotected alg, a bad signature); `untrustedReader(.unsupportedLeafKey)`.
    @discardableResult
    public func verifyReaderSignature(sessionTranscript: SessionTranscript) throws(MdocError) -> X509Certificate {
        guard let readerAuth else { throw .readerAuthenticationMissing }
        guard let der = readerAuth.headers.x5chainDER.first, let certificate = try? X509Certificate(derEncoded: der) else {
            throw .readerAuthenticationFailed(.invalidCertificate)
        }
        let key: PublicKey
        do { key = try certificate.publicKey } catch { throw .untrustedReader(.unsupportedLeafKey) }
        do {
            try readerAuth.verify(publicKey: key, detachedPayload: Self.readerAuthenticationBytes(sessionTranscript: sessionTranscript,
                                                                                                itemsRequest: itemsRequest),
                                  requireProtectedAlgorithm: true)
        } catch {
            throw .readerAuthenticationFailed(error)
        }
        return certificate
    }

    /// The reader certificate carried in readerAuth (not validated; see
    /// ``verifyReaderAuthentication(sessionTranscript:trustAnchors:at:policy:)``).
    public var readerCertificate: X509Certificate? {
        (try? readerAuth?.x5chain())?.first
    }

    func write(to splice: inout CBORSplice) {
        splice.mapHead(readerAuth == nil ? 1 : 2)
        splice.text("itemsRequest")
        splice.embedded(itemsRequest.encodedBytes)
        if let readerAuth {
            splice.text("readerAuth")
            splice.raw(readerAuth.encodedBytes)
        }
    }
}

import Foundation

/// The reader's request (ISO 18013-5 §8.3.2.1.2.1):
/// `{"version": tstr, "docRequests": [+ DocRequest], ...}`.
public struct DeviceRequest: Sendable, Hashable {
    /// The version ("1.0"; "1.1" with 2nd edition additions).
    public let version: String
    /// The document requests.
    public let docRequests: [DocRequest]
    /// The encoding, as received or built.
    public let encodedBytes: [UInt8]

    /// Assembles a request.
    public init(version: String = "1.0", docRequests: [DocRequest]) {
        self.version = version
        self.docRequests = docRequests
        var splice = CBORSplice()
        splice.mapHead(2)
        splice.text("version")
        splice.text(version)
        splice.text("docRequests")
        splice.arrayHead(docRequests.count)
        for request in docRequests { request.write(to: &splice) }
        encodedBytes = splice.bytes
    }

    /// The most document requests a parsed request may hold. ISO 18013-5 sets no
    /// bound; readers ask for a few documents, and each request costs the holder a
    /// readerAuth check, a consent entry and, once accepted, a document with a device
    /// signature: a bound keeps a 16 MiB request from costing hours or gigabytes.
    public static let maximumDocumentRequests = 64

    /// Parses a DeviceRequest, keeping exact bytes of every part.
    /// - Throws: `cbor` / `malformed` (status 11; `tooManyElements` past
    ///   ``maximumDocumentRequests``), `unsupportedVersion`, `cose`.
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        let item = try MdocDecoding.item(bytes)
        version = try item.required("version", in: "DeviceRequest").text("DeviceRequest version")
        guard version.hasPrefix("1.") else { throw .unsupportedVersion(version) }
        let requests = try item.required("docRequests", in: "DeviceRequest").requiredArray("docRequests")
        guard requests.count <= Self.maximumDocumentRequests else {
            throw .malformed(MdocMalformation("docRequests", .tooManyElements(limit: Self.maximumDocumentRequests)))
        }
        docRequests = try requests.map { element throws(MdocError) in try DocRequest(item: element) }
        encodedBytes = bytes
    }
}
