import CBOR
import Mdoc

extension TransportEndpoint {
    /// The retrieval-method type the SDK uses for its own carriers (TCP, in-memory).
    /// ISO 18013-5 leaves other types to private agreement; readers that do not know
    /// it ignore the method.
    public static let sdkRetrievalMethodType = 0x7E55

    /// The endpoint as a DeviceRetrievalMethod (ISO 18013-5 §8.2.1.1 shape).
    public var retrievalMethod: DeviceRetrievalMethod {
        switch self {
        case .tcp(let host, let port):
            return .other(type: Self.sdkRetrievalMethodType, version: 1,
                          options: [0: "tcp", 1: .textString(host), 2: CBOR(Int(port))])
        case .inMemory(let name):
            return .other(type: Self.sdkRetrievalMethodType, version: 1, options: [0: "inMemory", 3: .textString(name)])
        }
    }

    /// The endpoint in a retrieval method, if it is one of the SDK's.
    public init?(retrievalMethod: DeviceRetrievalMethod) {
        guard case .other(let type, _, let options) = retrievalMethod, type == Self.sdkRetrievalMethodType else { return nil }
        switch options[0]?.stringValue {
        case "tcp":
            guard let host = options[1]?.stringValue, let port = options[2]?.intValue, (1...65_535).contains(port) else { return nil }
            self = .tcp(host: host, port: UInt16(port))
        case "inMemory":
            guard let name = options[3]?.stringValue else { return nil }
            self = .inMemory(name: name)
        default:
            return nil
        }
    }

    /// The carrier configuration record for an NFC Handover Select.
    var carrierRecord: NDEFRecord {
        NDEFRecord(typeNameFormat: 2, type: NDEFMessage.tcpCarrierType, id: Array("0".utf8),
                   payload: retrievalMethod.cbor.encoded())
    }

    /// The transmission type of the endpoint.
    var transmissionType: TransmissionType {
        switch self {
        case .tcp: return .tcp
        case .inMemory: return .inMemory
        }
    }
}
