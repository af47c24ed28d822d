import CBOR

/// One way the reader can reach the mdoc for data retrieval, with its options
/// (ISO 18013-5 §8.2.1.1: `DeviceRetrievalMethod = [type, version, RetrievalOptions]`).
public enum DeviceRetrievalMethod: Sendable, Hashable {
    /// Type 1, NFC (§8.2.2.2).
    case nfc(version: Int = 1, NFCOptions)
    /// Type 2, Bluetooth Low Energy (§8.2.2.3).
    case ble(version: Int = 1, BLEOptions)
    /// Type 3, Wi-Fi Aware (§8.2.2.4).
    case wifiAware(version: Int = 1, WifiAwareOptions)
    /// A method type this module does not model, kept as decoded.
    case other(type: Int, version: Int, options: CBOR)

    /// NFC retrieval options: the largest command and response data fields.
    public struct NFCOptions: Sendable, Hashable {
        /// Key 0: maximum length of the command data field.
        public var maxCommandDataLength: UInt64
        /// Key 1: maximum length of the response data field.
        public var maxResponseDataLength: UInt64
        /// Options with both limits.
        public init(maxCommandDataLength: UInt64, maxResponseDataLength: UInt64) {
            self.maxCommandDataLength = maxCommandDataLength
            self.maxResponseDataLength = maxResponseDataLength
        }
    }

    /// BLE retrieval options: which roles the mdoc supports and their UUIDs.
    public struct BLEOptions: Sendable, Hashable {
        /// Key 0: mdoc peripheral server mode supported.
        public var peripheralServerMode: Bool
        /// Key 1: mdoc central client mode supported.
        public var centralClientMode: Bool
        /// Key 10: the UUID for peripheral server mode (16 bytes).
        public var peripheralServerUUID: [UInt8]?
        /// Key 11: the UUID for central client mode (16 bytes).
        public var centralClientUUID: [UInt8]?
        /// Key 20: the mdoc's BLE device address for peripheral server mode.
        public var peripheralServerDeviceAddress: [UInt8]?
        /// Key 21: the L2CAP PSM of the mdoc in peripheral server mode.
        public var peripheralServerL2CAPPSM: UInt64?
        /// Options with the given roles and identifiers.
        public init(peripheralServerMode: Bool, centralClientMode: Bool, peripheralServerUUID: [UInt8]? = nil,
                    centralClientUUID: [UInt8]? = nil, peripheralServerDeviceAddress: [UInt8]? = nil,
                    peripheralServerL2CAPPSM: UInt64? = nil) {
            self.peripheralServerMode = peripheralServerMode
            self.centralClientMode = centralClientMode
            self.peripheralServerUUID = peripheralServerUUID
            self.centralClientUUID = centralClientUUID
            self.peripheralServerDeviceAddress = peripheralServerDeviceAddress
            self.peripheralServerL2CAPPSM = peripheralServerL2CAPPSM
        }
    }

    /// Wi-Fi Aware retrieval options.
    public struct WifiAwareOptions: Sendable, Hashable {
        /// Key 0: passphrase information.
        public var passphraseInfo: String?
        /// Key 1: channel information, operating class.
        public var channelOperatingClass: UInt64?
        /// Key 2: channel information, channel number.
        public var channelNumber: UInt64?
        /// Key 3: band information (supported bands bitmap).
        public var bandInfo: [UInt8]?
        /// Options with the given fields.
        public init(passphraseInfo: String? = nil, channelOperatingClass: UInt64? = nil, channelNumber: UInt64? = nil,
                    bandInfo: [UInt8]? = nil) {
            self.passphraseInfo = passphraseInfo
            self.channelOperatingClass = channelOperatingClass
            self.channelNumber = channelNumber
            self.bandInfo = bandInfo
        }
    }

    /// The method as CBOR, options in ascending key order.
    public var cbor: CBOR {
        switch self {
        case .nfc(let version, let options):
            return [1, CBOR(version), .map(CBORMap([(0, .unsigned(options.maxCommandDataLength)),
                                            (1, .unsigned(options.maxResponseDataLength))]))]
        case .ble(let version, let options):
            var map = CBORMap()
            map.append(key: 0, value: .boolean(options.peripheralServerMode))
            map.append(key: 1, value: .boolean(options.centralClientMode))
            if let uuid = options.peripheralServerUUID { map.append(key: 10, value: .byteString(uuid)) }
            if let uuid = options.centralClientUUID { map.append(key: 11, value: .byteString(uuid)) }
            if let address = options.peripheralServerDeviceAddress { map.append(key: 20, value: .byteString(address)) }
            if let psm = options.peripheralServerL2CAPPSM { map.append(key: 21, value: .unsigned(psm)) }
            return [2, CBOR(version), .map(map)]
        case .wifiAware(let version, let options):
            var map = CBORMap()
            if let value = options.passphraseInfo { map.append(key: 0, value: .textString(value)) }
            if let value = options.channelOperatingClass { map.append(key: 1, value: .unsigned(value)) }
            if let value = options.channelNumber { map.append(key: 2, value: .unsigned(value)) }
            if let value = options.bandInfo { map.append(key: 3, value: .byteString(value)) }
            return [3, CBOR(version), .map(map)]
        case .other(let type, let version, let options):
            return [CBOR(type), CBOR(version), options]
        }
    }

    /// Reads a method from its CBOR form.
    /// - Throws: `malformed` when the shape or an option's type is wrong.
    public init(cbor: CBOR) throws(MdocError) {
        guard case .array(let parts) = cbor, parts.count >= 3, let type = parts[0].intValue,
              let version = parts[1].intValue else {
            throw .malformed("DeviceRetrievalMethod", .ruleViolated)
        }
        let options = parts[2]
        guard case .map(let map) = options else { throw .malformed("RetrievalOptions", .wrongType(expected: .map)) }
        func get<T>(_ key: Int, _ read: (CBOR) -> T?) throws(MdocError) -> T? {
            guard let value = map[CBOR(key)] else { return nil }
            guard let typed = read(value) else { throw .malformed("RetrievalOptions \(key)", .ruleViolated) }
            return typed
        }
        switch type {
        case 1:
            guard let command = try get(0, \.uint64Value), let response = try get(1, \.uint64Value) else {
                throw .malformed("NFC RetrievalOptions", .ruleViolated)
            }
            self = .nfc(version: version, NFCOptions(maxCommandDataLength: command, maxResponseDataLength: response))
        case 2:
            self = .ble(version: version, BLEOptions(
                peripheralServerMode: try get(0, \.boolValue) ?? false, centralClientMode: try get(1, \.boolValue) ?? false,
                peripheralServerUUID: try get(10, \.bytesValue), centralClientUUID: try get(11, \.bytesValue),
                peripheralServerDeviceAddress: try get(20, \.bytesValue), peripheralServerL2CAPPSM: try get(21, \.uint64Value)))
        case 3:
            self = .wifiAware(version: version, WifiAwareOptions(
                passphraseInfo: try get(0, \.stringValue), channelOperatingClass: try get(1, \.uint64Value),
                channelNumber: try get(2, \.uint64Value), bandInfo: try get(3, \.bytesValue)))
        default:
            self = .other(type: type, version: version, options: options)
        }
    }
}
