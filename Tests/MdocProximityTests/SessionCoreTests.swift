import Foundation
import Mdoc
@testable import MdocProximity
import Testing
import WalletCrypto

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
}
