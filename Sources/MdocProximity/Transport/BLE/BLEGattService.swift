import Foundation
import Mdoc
import WalletCrypto

/// The two BLE modes of ISO 18013-5 §8.3.3.1.1, named after the mdoc's role.
///
/// In **mdoc peripheral server mode** the mdoc is the GATT server (it advertises the
/// service UUID of the engagement) and the reader the GATT client; in **mdoc central
/// client mode** the reader is the GATT server and the mdoc the client. The names keep
/// this meaning in reverse engagement too (the SDK's reading: the options of a
/// ReaderEngagement say which role the *mdoc* takes).
public enum BLEMode: String, Hashable, Sendable, CaseIterable {
    /// The mdoc is the peripheral and GATT server.
    case peripheralServer
    /// The mdoc is the central and GATT client.
    case centralClient

    /// The GATT role `party` plays in this mode.
    public func gattRole(of party: SessionRole) -> BLEGattRole {
        switch (self, party) {
        case (.peripheralServer, .mdoc), (.centralClient, .reader): return .server
        case (.peripheralServer, .reader), (.centralClient, .mdoc): return .client
        }
    }

    /// The characteristics of the service in this mode (ISO 18013-5 tables 11 and 12):
    /// Ident exists only in the reader's service (central client mode).
    public var characteristics: [BLECharacteristic] {
        switch self {
        case .peripheralServer: return [.state, .client2Server, .server2Client, .l2cap]
        case .centralClient: return [.state, .client2Server, .server2Client, .ident, .l2cap]
        }
    }

    /// The standard UUID of `characteristic` in this mode; `nil` for Ident in
    /// peripheral server mode.
    public func uuid(of characteristic: BLECharacteristic) -> UUID? {
        // ISO 18013-5 §8.3.3.1.1.4: 0000000N-A123-48CE-896B-4C76973373E6.
        let number: Int
        switch (self, characteristic) {
        case (.peripheralServer, .state): number = 0x01
        case (.peripheralServer, .client2Server): number = 0x02
        case (.peripheralServer, .server2Client): number = 0x03
        case (.peripheralServer, .l2cap): number = 0x0A
        case (.peripheralServer, .ident): return nil
        case (.centralClient, .state): number = 0x05
        case (.centralClient, .client2Server): number = 0x06
        case (.centralClient, .server2Client): number = 0x07
        case (.centralClient, .ident): number = 0x08
        case (.centralClient, .l2cap): number = 0x0B
        }
        return UUID(uuidString: String(format: "%08X-A123-48CE-896B-4C76973373E6", number))
    }
}

/// The characteristics of the mdoc and mdoc reader services (ISO 18013-5 §8.3.3.1.1.4).
public enum BLECharacteristic: String, Hashable, Sendable, CaseIterable {
    /// State: start (0x01) and end (0x02) signals; written by the client, notified by the server.
    case state
    /// Client2Server: the client's messages, written without response.
    case client2Server
    /// Server2Client: the server's messages, notified.
    case server2Client
    /// Ident (reader service only): HKDF(EDeviceKeyBytes, "BLEIdent"), read by the mdoc.
    case ident
    /// L2CAP: the server's L2CAP PSM, read by the client.
    case l2cap
}

/// Which side of GATT a party plays.
public enum BLEGattRole: String, Hashable, Sendable {
    /// Publishes the service, advertises its UUID, notifies Server2Client.
    case server
    /// Scans, connects, subscribes, writes State and Client2Server.
    case client
}

/// An opaque identifier of a remote BLE device, as the platform names it.
public struct BLEPeerID: Hashable, Sendable {
    /// The platform's identifier (a CoreBluetooth UUID string, an Android address).
    public let rawValue: String
    /// Wraps an identifier.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// The service a GATT server publishes: its UUID and the characteristics of its mode,
/// with their standard UUIDs.
public struct BLEServiceDefinition: Hashable, Sendable {
    /// The service UUID (the one in the engagement).
    public let uuid: UUID
    /// The mode, which fixes the characteristic UUIDs.
    public let mode: BLEMode
    /// The characteristics, each with its UUID.
    public var characteristics: [BLECharacteristic: UUID] {
        var result: [BLECharacteristic: UUID] = [:]
        for characteristic in mode.characteristics { result[characteristic] = mode.uuid(of: characteristic) }
        return result
    }
}

/// The Ident characteristic value (ISO 18013-5 §8.3.3.1.1.4): HKDF-SHA-256 with the
/// EDeviceKeyBytes (the tag-24 item) as input key material, no salt, info "BLEIdent",
/// 16 bytes. The reader publishes it in central client mode; the mdoc reads it to
/// check that it reached the reader that scanned its engagement.
public enum BLEIdent {
    /// The Ident for `eDeviceKeyBytes` (`#6.24(bstr .cbor COSE_Key)`, as in the engagement).
    public static func value(eDeviceKeyBytes: [UInt8]) -> [UInt8] {
        // HKDF cannot fail for a 16-byte output of SHA-256; an empty value would only
        // make every comparison fail, never pass.
        (try? HKDF.deriveKey(inputKeyMaterial: eDeviceKeyBytes, info: Array("BLEIdent".utf8), outputByteCount: 16)) ?? []
    }
}

extension UUID {
    /// The 16 bytes in network (big-endian) order, as the engagement carries them.
    var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// A UUID from 16 big-endian bytes.
    init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        let b = bytes
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
