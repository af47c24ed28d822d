import Foundation
import WalletCrypto

/// Identifies one engagement (and the transfer that follows it) in events,
/// the hub's per-engagement maps and the manager.
public struct EngagementID: Hashable, Sendable, CustomStringConvertible {
    /// The underlying random identifier.
    public let uuid: UUID

    /// A fresh identifier.
    public init() { self.uuid = SystemRandom().uuid() }

    /// Wraps an existing identifier.
    public init(_ uuid: UUID) { self.uuid = uuid }

    /// The UUID string.
    public var description: String { uuid.uuidString }
}

/// How an engagement is made (ISO 18013-5 §8.2; reverse engagement ISO 18013-7).
public enum EngagementType: String, Hashable, Sendable, CaseIterable {
    /// The holder shows a QR code with its DeviceEngagement for the reader to scan.
    case qr
    /// NFC static handover: the reader taps and reads the DeviceEngagement over NFC.
    case nfc
    /// Reverse engagement: the holder scanned the reader's ReaderEngagement and connects to it.
    case toApp
}

/// The carrier that carries the session messages.
public enum TransmissionType: String, Hashable, Sendable {
    /// Bluetooth Low Energy (ISO 18013-5 §8.3.3.1.1).
    case ble
    /// NFC data transfer (ISO 18013-5 §8.3.3.1.2).
    case nfc
    /// Wi-Fi Aware (ISO 18013-5 §8.3.3.1.3).
    case wifiAware
    /// A TCP socket (desktop tools, tests, loopback).
    case tcp
    /// An in-process pair (tests, demos).
    case inMemory
}
