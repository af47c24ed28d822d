import COSE
import Foundation
import Mdoc
@testable import MdocProximity
import Testing
import WalletCrypto
import WalletRuntime

/// The holder's and the reader's session cores driven against each other as values, with
/// no carrier: what each does with a status the other side chooses.
@Suite("Session cores")
struct SessionCoreTests {
    /// A holder core that has received the reader's first request (waiting for consent),
    /// and the reader core that sent it.
    static func established() throws -> (holder: HolderSessionCore, reader: ReaderSessionCore) {
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey))
        var holder = HolderSessionCore(eDeviceKey: eDeviceKey, deviceEngagement: engagement, handover: .qr,
                                       messageTimeout: .seconds(30), providerTimeout: .seconds(30))
        _ = holder.start()
        var reader = try ReaderSessionCore(eReaderKey: try ECPrivateKey.generate(curve: .p256), deviceEngagement: engagement, handover: .qr)
        let first = try reader.send(DeviceRequest(docRequests: [DocRequest(itemsRequest: SessionFixtures.request())]))
        _ = try holder.handle(.received(first, at: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(holder.phase == .awaitingConsent)
        return (holder, reader)
    }

    /// Table 20 defines 10, 11 and 20; a peer may put any CBOR uint there, up to 2^64 - 1.
    static let statuses: [UInt64] = [10, 11, 0, 21, UInt64(Int.max), UInt64(Int.max) + 1, .max]

    @Test("a status other than 20 from the reader ends the holder's session as peerReportedError, with the code as sent", arguments: statuses)
    func holderReceivesStatus(status: UInt64) throws {
        var (holder, _) = try Self.established()
        let effects = try holder.handle(.received(SessionData(status: SessionData.Status(rawValue: status)).encodedBytes,
                                                  at: Date(timeIntervalSince1970: 1_800_000_001)))
        #expect(holder.phase == .ended)
        #expect(holder.ending == .failed(.peerReportedError(status: status)))
        #expect(effects.contains(.closeCarrier))
        #expect(!effects.contains { if case .send = $0 { true } else { false } })
    }

    @Test("status 20 from the reader ends the session even with data: after a response, the data is never a new request before the user")
    func terminationWithData() async throws {
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey))
        var holder = HolderSessionCore(eDeviceKey: eDeviceKey, deviceEngagement: engagement, handover: .qr,
                                       messageTimeout: .seconds(30), providerTimeout: .seconds(30))
        _ = holder.start()
        // The reader's side by hand, so that it can encrypt what it likes.
        let readerKey = try ECPrivateKey.generate(curve: .p256)
        let transcript = SessionTranscript(deviceEngagement: engagement,
                                           eReaderKeyEncoded: COSEKey(publicKey: .ec(readerKey.publicKey)).encoded(), handover: .qr)
        let keys = try SessionKeys(sharedSecret: try readerKey.sharedSecret(with: eDeviceKey.publicKey), sessionTranscript: transcript)
        var reader = SessionEncryption(role: .reader, keys: keys, sessionTranscript: transcript)
        let first = DeviceRequest(docRequests: [DocRequest(itemsRequest: SessionFixtures.request())])
        _ = try holder.handle(.received(SessionEstablishment(eReaderKey: readerKey.publicKey,
                                                             data: try reader.encrypt(first.encodedBytes)).encodedBytes, at: time))
        let fixtures = try await SessionFixtures.make()
        let response = try await DeviceResponseBuilder.respond(
            to: try #require(holder.deviceRequest), with: [fixtures.credential], sessionTranscript: try #require(holder.sessionTranscript),
            authentication: { _ in .signature(SoftwareSigner(fixtures.deviceKey)) })
        _ = try holder.handle(.respond(response, terminate: false))
        #expect(holder.phase == .responded)
        let second = DeviceRequest(docRequests: [DocRequest(itemsRequest: SessionFixtures.request(["document_number"]))])
        let effects = try holder.handle(.received(SessionData(data: try reader.encrypt(second.encodedBytes),
                                                              status: .sessionTermination).encodedBytes, at: time))
        #expect(holder.phase == .ended)
        #expect(effects.contains(.publish(.sessionTerminationReceived(afterResponse: true))))
        #expect(!effects.contains { if case .publish(.documentsSelectionProcessStart) = $0 { true } else { false } })
    }

    @Test("a status other than 20 from the mdoc ends the reader's session as peerReportedError, with the code as sent", arguments: statuses)
    func readerReceivesStatus(status: UInt64) throws {
        var (_, reader) = try Self.established()
        #expect(throws: ProximityError.peerReportedError(status: status)) {
            _ = try reader.receive(SessionData(status: SessionData.Status(rawValue: status)).encodedBytes)
        }
        #expect(reader.isEnded)
        let keys = SessionKeys(skReader: SymmetricKey(bytes: Array(repeating: 5, count: 32)),
                               skDevice: SymmetricKey(bytes: Array(repeating: 6, count: 32)))
        var encryption = SessionEncryption(role: .reader, keys: keys, sessionTranscript: reader.sessionTranscript)
        #expect(throws: MdocError.peerReportedError(status: status)) {
            _ = try encryption.open(SessionData(status: SessionData.Status(rawValue: status)))
        }
    }

    // MARK: Reader authentication

    /// A reader root and a reader authentication certificate under it, and the reader's key.
    static func readerPKI() throws -> (root: X509Certificate, key: ReaderAuthenticationKey) {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: DistinguishedName([(.commonName, "Session Core Reader Root")]),
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).selfSigned(with: .ec(rootKey))
        let key = try ECPrivateKey.generate(curve: .p256)
        let leaf = try CertificateBuilder.mdocReaderAuthentication(
            subject: DistinguishedName([(.commonName, "Session Core Reader")]), subjectPublicKeyInfoDER: try key.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).signed(by: root, key: .ec(rootKey))
        return (root, ReaderAuthenticationKey(signer: SoftwareSigner(key), certificateChain: [leaf]))
    }

    /// The holder core's state after the reader's first request, whose document requests
    /// are signed by `signers` in order (nil: that one carries no readerAuth).
    static func receive(signedBy signers: [ReaderAuthenticationKey?], anchors: [X509Certificate]?,
                        require: Bool, forSession other: SessionTranscript? = nil) async throws -> (HolderSessionCore, [HolderSessionCore.Effect]) {
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey))
        var holder = HolderSessionCore(eDeviceKey: eDeviceKey, deviceEngagement: engagement, handover: .qr,
                                       readerTrustAnchors: anchors, requireReaderAuthentication: require,
                                       messageTimeout: .seconds(30), providerTimeout: .seconds(30))
        _ = holder.start()
        var reader = try ReaderSessionCore(eReaderKey: try ECPrivateKey.generate(curve: .p256), deviceEngagement: engagement, handover: .qr)
        var docRequests: [DocRequest] = []
        for signer in signers {
            if let signer {
                docRequests.append(try await DocRequest(itemsRequest: SessionFixtures.request(), readerKey: signer,
                                                        sessionTranscript: other ?? reader.sessionTranscript))
            } else {
                docRequests.append(DocRequest(itemsRequest: SessionFixtures.request()))
            }
        }
        let first = try reader.send(DeviceRequest(docRequests: docRequests))
        let effects = try holder.handle(.received(first, at: Date(timeIntervalSince1970: 1_800_000_000)))
        return (holder, effects)
    }

    @Test("required reader authentication: a document request without readerAuth ends the session before consent, status 11")
    func requiredReaderAuthenticationMissing() async throws {
        let pki = try Self.readerPKI()
        for signers in [[nil], [pki.key, nil], [nil, pki.key]] as [[ReaderAuthenticationKey?]] {
            let (holder, effects) = try await Self.receive(signedBy: signers, anchors: [pki.root], require: true)
            #expect(holder.phase == .ended)
            #expect(holder.ending == .failed(.readerAuthenticationFailed(.readerAuthenticationMissing)))
            #expect(effects.contains(.send(SessionData(status: .cborDecodingError).encodedBytes)))
            #expect(!effects.contains { if case .publish(.documentsSelectionProcessStart) = $0 { true } else { false } })
        }
    }

    @Test("required reader authentication: every document request signed under the anchors reaches consent")
    func requiredReaderAuthenticationPresent() async throws {
        let pki = try Self.readerPKI()
        let (holder, _) = try await Self.receive(signedBy: [pki.key, pki.key], anchors: [pki.root], require: true)
        #expect(holder.phase == .awaitingConsent)
    }

    @Test("required reader authentication without anchors: no reader verifies, so even a signed request ends the session")
    func requiredReaderAuthenticationWithoutAnchors() async throws {
        let pki = try Self.readerPKI()
        for anchors in [nil, []] as [[X509Certificate]?] {
            let (holder, _) = try await Self.receive(signedBy: [pki.key], anchors: anchors, require: true)
            #expect(holder.phase == .ended)
            guard case .failed(.readerAuthenticationFailed(.untrustedReader)) = holder.ending else {
                Issue.record("ended \(String(describing: holder.ending))"); continue
            }
        }
    }

    @Test("optional reader authentication (the default): an unsigned request reaches consent, a signed one must verify")
    func optionalReaderAuthentication() async throws {
        let pki = try Self.readerPKI()
        let stranger = try Self.readerPKI()
        #expect(try await Self.receive(signedBy: [nil], anchors: [pki.root], require: false).0.phase == .awaitingConsent)
        #expect(try await Self.receive(signedBy: [pki.key], anchors: nil, require: false).0.phase == .awaitingConsent)
        let (holder, _) = try await Self.receive(signedBy: [nil, stranger.key], anchors: [pki.root], require: false)
        #expect(holder.phase == .ended)
        guard case .failed(.readerAuthenticationFailed(.untrustedReader)) = holder.ending else {
            Issue.record("ended \(String(describing: holder.ending))"); return
        }
    }

    @Test("without anchors, readerAuth must still be signed by its own certificate's key for this session, or the session ends")
    func readerSignatureWithoutAnchors() async throws {
        let pki = try Self.readerPKI()
        // Signed for another session (a request replayed, or a certificate borrowed with a made-up signature).
        let elsewhere = SessionTranscript(deviceEngagementEncoded: nil, eReaderKeyEncoded: nil, handover: .qr)
        let (holder, effects) = try await Self.receive(signedBy: [pki.key], anchors: nil, require: false, forSession: elsewhere)
        #expect(holder.phase == .ended)
        #expect(holder.ending == .failed(.readerAuthenticationFailed(.readerAuthenticationFailed(.invalidSignature))))
        #expect(effects.contains(.send(SessionData(status: .cborDecodingError).encodedBytes)))
        let (signed, _) = try await Self.receive(signedBy: [pki.key, nil], anchors: nil, require: false)
        #expect(signed.phase == .awaitingConsent)
    }

    // MARK: Bounds on a request

    @Test("a request of more document requests than DeviceRequest.maximumDocumentRequests ends the session before consent, status 11")
    func tooManyDocumentRequests() async throws {
        let limit = DeviceRequest.maximumDocumentRequests
        let (atLimit, _) = try await Self.receive(signedBy: Array(repeating: nil, count: limit), anchors: nil, require: false)
        #expect(atLimit.phase == .awaitingConsent)
        #expect(atLimit.deviceRequest?.docRequests.count == limit)
        let (holder, effects) = try await Self.receive(signedBy: Array(repeating: nil, count: limit + 1), anchors: nil, require: false)
        #expect(holder.phase == .ended)
        #expect(holder.ending == .failed(.invalidMessage(.deviceRequest(.malformed(MdocMalformation("docRequests", .tooManyElements(limit: limit)))))))
        #expect(effects.contains(.send(SessionData(status: .cborDecodingError).encodedBytes)))
        #expect(!effects.contains { if case .publish(.documentsSelectionProcessStart) = $0 { true } else { false } })
    }

    // MARK: A carrier that stops taking messages

    // The response is the session's last message (the core has ended) and its send never
    // completes: only closing the carrier can end it, which the app's close must do.
    @Test("close ends a session whose last message waits on a carrier the reader stopped reading", .timeLimit(.minutes(5)))
    func closeWhileLastSendWaits() async throws {
        let (holder, _) = try Self.established()
        let transport = StalledTransport()
        let transfer = TransferManager(engagementId: EngagementID(), transport: transport, hub: MdocEventHub(), clock: SystemClock(),
                                       core: holder, providerTimeout: .seconds(30))
        await transfer.start()
        let sending = Task { try? await transfer.sendDeviceResponse(DeviceResponse(documents: [])) }
        await transport.sendStarted()
        #expect(await transfer.phase == .ended)
        await transfer.close()
        await sending.value
        await transfer.waitUntilEnded()
        #expect(transport.isClosed)
    }
}

/// A carrier whose sends and receives wait until it is closed, then fail: a reader that
/// connected and stopped reading (its buffers full).
private final class StalledTransport: MdocTransport, @unchecked Sendable {
    let transmissionType = TransmissionType.tcp
    private let lock = NSLock()
    private var closed = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var sendWatchers: [CheckedContinuation<Void, Never>] = []
    private var sends = 0

    var isClosed: Bool { lock.withLock { closed } }

    /// Returns once a send is waiting.
    func sendStarted() async {
        await withCheckedContinuation { continuation in
            let started = lock.withLock { () -> Bool in
                if sends > 0 { return true }
                sendWatchers.append(continuation)
                return false
            }
            if started { continuation.resume() }
        }
    }

    private func waitForClose() async {
        await withCheckedContinuation { continuation in
            let isClosed = lock.withLock { () -> Bool in
                if closed { return true }
                waiting.append(continuation)
                return false
            }
            if isClosed { continuation.resume() }
        }
    }

    func send(_ message: [UInt8]) async throws(ProximityError) {
        let watchers = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            sends += 1
            defer { sendWatchers.removeAll() }
            return sendWatchers
        }
        for watcher in watchers { watcher.resume() }
        await waitForClose()
        throw .connectionClosed
    }

    func receive(timeout: Duration?) async throws(ProximityError) -> [UInt8] {
        await waitForClose()
        throw .connectionClosed
    }

    func close() async {
        let resumed = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            closed = true
            defer { waiting.removeAll() }
            return waiting
        }
        for continuation in resumed { continuation.resume() }
    }
}
