import CBOR
import COSE
import Dispatch
import Foundation
import Mdoc
import WalletCrypto
import WalletEncoding
import WalletRuntime

/// The `mdoc` case: an mDL of 12 elements with a 50 KB portrait. The holder derives the
/// session keys, builds a signed DeviceResponse and encrypts it; the reader derives its
/// keys, decrypts and verifies it (chain, issuer signature, 12 digests, device signature).
/// Each is printed against its crypto floor: the bare ECDH, HKDF, AES-GCM, SHA-256 and
/// ECDSA operations the same work needs, timed in the same run.
enum MdocBenchmark {
    static func run(iterations: Int, python: String?) throws -> [BenchRow] {
        let rows = LockedBox<[BenchRow]>([])
        try blocking { let measured = try await runAsync(iterations: iterations, python: python); rows.withLock { $0 = measured } }
        return rows.withLock { $0 }
    }

    private static func runAsync(iterations: Int, python: String?) async throws -> [BenchRow] {
        let now = Date()
        let iacaKey = try ECPrivateKey.generate(curve: .p256)
        let dsKey = try ECPrivateKey.generate(curve: .p256)
        let iaca = try CertificateBuilder.iaca(subject: try DistinguishedName([(.commonName, "Bench IACA")]),
                                                               notBefore: now.addingTimeInterval(-86_400),
                                                               notAfter: now.addingTimeInterval(86_400 * 365)).selfSigned(with: .ec(iacaKey))
        let ds = try CertificateBuilder.mdocDocumentSigner(subject: try DistinguishedName([(.commonName, "Bench DS")]),
                                                  subjectPublicKeyInfoDER: dsKey.publicKey.spkiDER,
                                                  notBefore: now.addingTimeInterval(-86_400),
                                                  notAfter: now.addingTimeInterval(86_400 * 365)).signed(by: iaca, key: .ec(iacaKey))
        let deviceKey = try ECPrivateKey.generate(curve: .p256)
        let portrait = [UInt8]((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let elements: [DataElement] = [
            DataElement("family_name", "Mustermann"), DataElement("given_name", "Erika"),
            DataElement("birth_date", .tagged(1004, "1964-08-12")), DataElement("issue_date", .tagged(1004, "2024-01-01")),
            DataElement("expiry_date", .tagged(1004, "2034-01-01")), DataElement("issuing_country", "DE"),
            DataElement("issuing_authority", "KBA"), DataElement("document_number", "T22000129"),
            DataElement("portrait", .byteString(portrait)), DataElement("driving_privileges", [["vehicle_category_code": "B"]]),
            DataElement("un_distinguishing_sign", "D"), DataElement("age_over_18", true),
        ]
        let credential = try await MdocIssuer(signer: SoftwareSigner(dsKey), certificateChain: [ds]).issue(
            docType: "org.iso.18013.5.1.mDL", nameSpaces: [NameSpaced("org.iso.18013.5.1", elements)],
            deviceKey: COSEKey(publicKey: .ec(deviceKey.publicKey)),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86_400)))
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: ItemsRequest(
            docType: "org.iso.18013.5.1.mDL", nameSpaces: [NameSpaced("org.iso.18013.5.1", elements.map { RequestedElement($0.identifier, false) })]))])
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let eReaderKey = try ECPrivateKey.generate(curve: .p256)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey))
        let transcript = SessionTranscript(deviceEngagement: engagement,
                                           eReaderKeyEncoded: COSEKey(publicKey: .ec(eReaderKey.publicKey)).encoded(), handover: .qr)
        let deviceSigner = SoftwareSigner(deviceKey)

        // Holder: keys, build, encrypt. Once first, for the reader's input and the floors' sizes.
        func respond() async throws -> (encrypted: [UInt8], response: [UInt8]) {
            var session = try await SessionEncryption(role: .mdoc, privateKey: SoftwareKeyAgreement(eDeviceKey), peerPublicKey: eReaderKey.publicKey,
                                                      sessionTranscript: transcript)
            let response = try await DeviceResponseBuilder.respond(to: request, with: [credential], sessionTranscript: transcript,
                                                                   authentication: { _ in .signature(deviceSigner) })
            return (try session.encrypt(response.encodedBytes), response.encodedBytes)
        }
        let (encrypted, responseBytes) = try await respond()
        // Reader: keys, decrypt, verify.
        let verifier = DeviceResponseVerifier(trustAnchors: [iaca], sessionTranscript: transcript)
        func read() async throws {
            var session = try await SessionEncryption(role: .reader, privateKey: SoftwareKeyAgreement(eReaderKey), peerPublicKey: eDeviceKey.publicKey,
                                                      sessionTranscript: transcript)
            let plaintext = try session.decrypt(encrypted)
            let verified = try await verifier.verify(try DeviceResponse(encoded: plaintext), at: now)
            guard verified.documents.first?.issuerSigned.first?.elements.count == 12 else { throw BenchmarkFailure() }
        }

        // The floors, over the same sizes.
        let plaintextSize = encrypted.count - AESGCM.tagByteCount
        let message = [UInt8](repeating: 0x42, count: plaintextSize)
        let key = SymmetricKey(bytes: [UInt8](repeating: 7, count: 32))
        let ikm = [UInt8](repeating: 7, count: 32)
        let nonce = SessionEncryption.nonce(sender: .mdoc, counter: 1)
        let sealed = try AESGCM.seal(message, key: key, nonce: nonce).ciphertextAndTag
        let salt = HashAlgorithm.sha256.digest(transcript.taggedBytes)
        let toSign = [UInt8](repeating: 1, count: 700)
        let signature = try deviceKey.signature(for: toSign)
        let items = credential.items(in: "org.iso.18013.5.1").map { $0.taggedBytes }
        let ecdh = { blackHole(try eDeviceKey.sharedSecret(with: eReaderKey.publicKey)) }
        let hkdf = { blackHole(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("SKDevice".utf8), outputByteCount: 32)) }
        let seal = { blackHole(try AESGCM.seal(message, key: key, nonce: nonce)) }
        let open = { blackHole(try AESGCM.open(combined: sealed, key: key, nonce: nonce)) }
        let sign = { blackHole(try deviceKey.signature(for: toSign)) }
        let verify = { blackHole(deviceKey.publicKey.isValidSignature(signature, for: toSign)) }
        let digests = { for item in items { blackHole(HashAlgorithm.sha256.digest(item)) } }
        // Each side in the same rounds as its floor (see `interleavedMedians`).
        let medians = try await asyncInterleavedMedians(iterations: iterations, [
            { blackHole(try await respond()) },
            // Holder: 1 ECDH + 2 HKDF (SKReader, SKDevice) + 1 ECDSA sign + 1 AES-GCM seal.
            { try ecdh(); try hkdf(); try hkdf(); try sign(); try seal() },
            { try await read() },
            // Reader: 1 ECDH + 2 HKDF + 1 AES-GCM open + 12 SHA-256 + 3 ECDSA verifies
            // (DS certificate, issuerAuth, deviceSignature).
            { try ecdh(); try hkdf(); try hkdf(); try open(); digests(); verify(); verify(); verify() },
        ])
        let (holder, holderFloor, reader, readerFloor) = (medians[0], medians[1], medians[2], medians[3])
        // The parts of the floors, each on its own (for the detail line).
        let parts = try interleavedMedians(iterations: iterations, [ecdh, hkdf, seal, open, sign, verify, digests])
        detail("mdoc: mDL of 12 elements (50 KB portrait), DeviceResponse \(plaintextSize) bytes, \(iterations) iterations, median per run")
        detail(String(format: "  holder: keys + build + sign + encrypt   %8.3f ms   %5.2fx its floor (%.3f ms: ECDH, 2 HKDF, ECDSA sign, AES-GCM seal)",
                     holder * 1e3, holder / holderFloor, holderFloor * 1e3))
        detail(String(format: "  reader: keys + decrypt + verify         %8.3f ms   %5.2fx its floor (%.3f ms: ECDH, 2 HKDF, AES-GCM open, 12 SHA-256, 3 ECDSA verify)",
                     reader * 1e3, reader / readerFloor, readerFloor * 1e3))
        detail(String(format: "  floor parts: ECDH %.3f ms, HKDF %.3f ms, seal %.3f ms, open %.3f ms, sign %.3f ms, verify %.3f ms, digests %.3f ms",
                     parts[0] * 1e3, parts[1] * 1e3, parts[2] * 1e3, parts[3] * 1e3, parts[4] * 1e3, parts[5] * 1e3, parts[6] * 1e3))
        // pymdoccbor on the same (decrypted) response: parse, and verify the issuer
        // signature, the chain to the same IACA and the digests. It does less than the
        // SDK's reader (no session keys, no decryption, no device signature).
        let peer = python.flatMap { comparePython($0, response: responseBytes, iaca: iaca, iterations: iterations, sdkReader: reader) }
        return [
            BenchRow(suite: "mdoc", name: "holder: keys, build, sign, encrypt", sdkSeconds: holder, floorSeconds: holderFloor,
                     floorName: "ECDH, 2 HKDF, sign, seal", targetRatio: 1.5),
            BenchRow(suite: "mdoc", name: "reader: keys, decrypt, verify", sdkSeconds: reader, floorSeconds: readerFloor,
                     floorName: "ECDH, 2 HKDF, open, 12 SHA-256, 3 verify", targetRatio: 1.5,
                     peerName: peer.map { _ in "pymdoccbor verify" }, peerSeconds: peer, peerTargetSpeedup: 5),
        ]
    }

    /// pymdoccbor (Python, the EUDI mdoc library) loading and verifying `response`.
    private static func comparePython(_ python: String, response: [UInt8], iaca: X509Certificate, iterations: Int,
                                      sdkReader: Double) -> Double? {
        let script = """
        import sys, time, statistics, logging
        logging.disable(logging.CRITICAL)
        from cryptography import x509
        from pymdoccbor.mdoc.verifier import MdocCbor
        iaca = x509.load_der_x509_certificate(bytes.fromhex(sys.argv[1])); n = int(sys.argv[2])
        response = sys.stdin.buffer.read().hex()
        def verify():
            mdoc = MdocCbor()
            mdoc.loads(response)
            if mdoc.verify(trusted_root_certs=[iaca]) is not True:
                raise SystemExit(3)
        verify()
        samples = []
        for _ in range(n):
            t = time.perf_counter(); verify(); samples.append(time.perf_counter() - t)
        print(statistics.median(samples))
        """
        guard let numbers = PythonPeer.run(python, script: script, arguments: [Hex.encode(iaca.derEncoded), String(iterations)],
                                           input: response, expecting: 1) else {
            detail("  pymdoccbor: \(python) has no pymdoccbor that verifies this response")
            return nil
        }
        detail(String(format: "  pymdoccbor (Python) verify %8.3f ms   SDK reader is %.1fx faster", numbers[0] * 1e3, numbers[0] / sdkReader))
        return numbers[0]
    }
}
