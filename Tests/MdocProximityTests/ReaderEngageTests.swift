import CBOR
import COSE
import Foundation
import Mdoc
import Testing
import WalletCrypto
@testable import MdocProximity

/// Counts connects, and fails each one (a reader that must not get this far).
private final class ConnectCounter: MdocTransportConnector, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var connects: Int { lock.withLock { count } }

    func canConnect(to endpoint: TransportEndpoint) -> Bool { true }
    func connect(to endpoint: TransportEndpoint, context: ConnectionContext,
                 timeout: Duration?) async throws(ProximityError) -> any MdocTransport {
        lock.withLock { count += 1 }
        throw .connectionClosed
    }
    func listen(context: ConnectionContext) async throws(ProximityError) -> any MdocTransportListener {
        throw .connectionClosed
    }
}

@Suite("MdocReader engagement")
struct ReaderEngageTests {
    @Test("an engagement whose key is not an EC key fails with the session-encryption error before any connect")
    func nonECKeyFailsBeforeConnecting() async throws {
        // A valid engagement, its EDeviceKey swapped for an Ed25519 COSE_Key (a key that
        // parses but cannot do ECDH).
        let real = DeviceEngagement(security: EngagementSecurity(eDeviceKey: try ECPrivateKey.generate(curve: .p256).publicKey),
                                    deviceRetrievalMethods: [TransportEndpoint.tcp(host: "127.0.0.1", port: 9).retrievalMethod])
        let okp = COSEKey(publicKey: .ed25519(try Ed25519PrivateKey.generate().publicKey)).encoded()
        // DeviceEngagement = {0: version, 1: Security = [cipher suite, #6.24(COSE_Key)], ...}
        guard case .map(var fields) = try CBOR.decode(real.encodedBytes), case .array(var security)? = fields[CBOR(1)] else {
            Issue.record("engagement layout")
            return
        }
        security[1] = .tagged(24, .byteString(okp))
        fields[CBOR(1)] = .array(security)
        let forged = try DeviceEngagement(encoded: CBOR.map(fields).encoded())
        let connector = ConnectCounter()
        let reader = try MdocReader(connector: connector, trustAnchors: [])
        await #expect(throws: ProximityError.sessionEncryptionFailed(.cose(.invalidKey(.wrongKeyType(expected: .ec2))))) {
            try await reader.engage(qrCodeUri: forged.uri)
        }
        #expect(connector.connects == 0)
        // A good key gets as far as the carrier (which refuses here).
        await #expect(throws: ProximityError.connectionClosed) { try await reader.engage(qrCodeUri: real.uri) }
        #expect(connector.connects == 1)
    }
}
