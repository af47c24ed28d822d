import Mdoc

/// The Wi-Fi Aware carrier configuration of an NFC handover
/// (`application/vnd.wfa.nan`, ISO 18013-5 §8.2.2.1): a sequence of attributes, each
/// a length byte (counting the type), a type byte and the value. The SDK parses it so
/// that a reader's or mdoc's Wi-Fi Aware offer is understood and can be passed to a
/// platform Wi-Fi Aware stack; it does not carry sessions over Wi-Fi Aware itself.
public struct WiFiAwareCarrier: Hashable, Sendable {
    /// One attribute.
    public struct Attribute: Hashable, Sendable {
        /// The attribute type.
        public var type: UInt8
        /// Its value.
        public var value: [UInt8]
        /// An attribute.
        public init(type: UInt8, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    /// Attribute type 0x01: the cipher suites offered.
    public static let cipherSuiteInfo: UInt8 = 0x01
    /// Attribute type 0x02: password information (an identifier and the passphrase).
    public static let passwordInfo: UInt8 = 0x02
    /// Attribute type 0x03: channel information.
    public static let channelInfo: UInt8 = 0x03
    /// Attribute type 0x04: the supported bands.
    public static let bandInfo: UInt8 = 0x04

    /// The attributes in the order read.
    public var attributes: [Attribute]

    /// A configuration of `attributes`.
    public init(attributes: [Attribute]) { self.attributes = attributes }

    /// Parses the record payload, rejecting an attribute that runs past the end.
    public init(payload: [UInt8]) throws(ProximityError) {
        var reader = ByteReader(payload)
        var attributes: [Attribute] = []
        while !reader.isAtEnd {
            let length = Int(try reader.byte())
            guard length >= 1 else { throw .malformedFrame(.tooShort(length: 0, minimum: 1)) }
            let type = try reader.byte()
            attributes.append(Attribute(type: type, value: try reader.bytes(length - 1)))
        }
        self.attributes = attributes
    }

    /// The record payload.
    public var payload: [UInt8] {
        // A length byte counts the type too, so a value holds at most 254 bytes.
        attributes.flatMap { attribute -> [UInt8] in
            let value = Array(attribute.value.prefix(254))
            return [UInt8(value.count + 1), attribute.type] + value
        }
    }

    /// The value of the first attribute of `type`.
    public func value(of type: UInt8) -> [UInt8]? { attributes.first { $0.type == type }?.value }

    /// The supported cipher suites.
    public var cipherSuites: [UInt8]? { value(of: Self.cipherSuiteInfo) }

    /// The supported bands bitmap.
    public var supportedBands: [UInt8]? { value(of: Self.bandInfo) }

    /// The same offer as DeviceEngagement retrieval options (ISO 18013-5 §8.2.1.1, Wi-Fi Aware).
    public var retrievalOptions: DeviceRetrievalMethod.WifiAwareOptions {
        DeviceRetrievalMethod.WifiAwareOptions(bandInfo: supportedBands)
    }
}
