import CBOR
import COSE

/// How the mdoc authenticated a document (ISO 18013-5 §8.3.2.1.2.2, `DeviceAuth`).
public enum DeviceAuth: Sendable, Hashable {
    /// `deviceSignature`: COSE_Sign1 with a detached payload.
    case signature(COSESign1)
    /// `deviceMac`: COSE_Mac0 with a detached payload.
    case mac(COSEMac0)

    /// The length of the COSE message's encoding.
    var encodedByteCount: Int {
        switch self {
        case .signature(let signature): signature.encodedBytes.count
        case .mac(let mac): mac.encodedBytes.count
        }
    }
}

/// Elements the mdoc signs itself, by namespace: `DeviceNameSpaces = {tstr => {tstr => any}}`,
/// carried as `DeviceNameSpacesBytes = #6.24(bstr .cbor DeviceNameSpaces)`.
public struct DeviceNameSpaces: Sendable, Hashable {
    /// The elements by namespace, in order.
    public let nameSpaces: [NameSpaced<DataElement>]
    /// The encoding (content of DeviceNameSpacesBytes), as received or built.
    public let encodedBytes: [UInt8]

    /// No device-signed elements (the usual case).
    public static let empty = DeviceNameSpaces(nameSpaces: [])

    /// Builds device-signed elements.
    public init(nameSpaces: [NameSpaced<DataElement>]) {
        self.nameSpaces = nameSpaces
        encodedBytes = CBOR.map(CBORMap(nameSpaces.map { space in
            (CBOR.textString(space.nameSpace), CBOR.map(CBORMap(space.elements.map { (CBOR.textString($0.identifier), $0.value) })))
        })).encoded()
    }

    init(item: CBORItem) throws(MdocError) {
        var spaces: [NameSpaced<DataElement>] = []
        for (key, elements) in try item.requiredMap("DeviceNameSpaces") {
            var list: [DataElement] = []
            for (id, value) in try elements.requiredMap("DeviceSignedItems") {
                list.append(DataElement(identifier: try id.text("device signed element identifier"), value: value.value))
            }
            spaces.append(NameSpaced(nameSpace: try key.text("DeviceNameSpaces key"), elements: list))
        }
        nameSpaces = spaces
        encodedBytes = item.exactBytes
    }

    /// `DeviceNameSpacesBytes`.
    public var taggedBytes: [UInt8] { CBORSplice.embedded(encodedBytes) }

    /// Equal when the encodings are.
    public static func == (lhs: DeviceNameSpaces, rhs: DeviceNameSpaces) -> Bool { lhs.encodedBytes == rhs.encodedBytes }
    /// Hashes the encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(encodedBytes) }
}

/// The device-signed part of a document: `{"nameSpaces": DeviceNameSpacesBytes, "deviceAuth": DeviceAuth}`.
public struct DeviceSigned: Sendable, Hashable {
    /// The device-signed elements.
    public let nameSpaces: DeviceNameSpaces
    /// The signature or MAC over DeviceAuthenticationBytes.
    public let deviceAuth: DeviceAuth

    /// Assembles device-signed data.
    public init(nameSpaces: DeviceNameSpaces, deviceAuth: DeviceAuth) {
        self.nameSpaces = nameSpaces
        self.deviceAuth = deviceAuth
    }

    init(item: CBORItem) throws(MdocError) {
        let tagged = try item.required("nameSpaces", in: "DeviceSigned")
        nameSpaces = try DeviceNameSpaces(item: try MdocDecoding.embedded(tagged, "DeviceNameSpacesBytes"))
        let auth = try item.required("deviceAuth", in: "DeviceSigned")
        _ = try auth.requiredMap("DeviceAuth")
        switch (auth["deviceSignature"], auth["deviceMac"]) {
        case (let signature?, nil):
            do { deviceAuth = .signature(try COSESign1(item: signature)) } catch { throw .cose(error) }
        case (nil, let mac?):
            do { deviceAuth = .mac(try COSEMac0(item: mac)) } catch { throw .cose(error) }
        default:
            throw .missingDeviceAuthentication
        }
    }

    /// `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication",
    /// SessionTranscript, DocType, DeviceNameSpacesBytes])` (ISO 18013-5 §9.1.3.4), from
    /// exact bytes.
    public static func deviceAuthenticationBytes(sessionTranscript: SessionTranscript, docType: String,
                                                 nameSpaces: DeviceNameSpaces) -> [UInt8] {
        var splice = CBORSplice()
        splice.arrayHead(4)
        splice.text("DeviceAuthentication")
        splice.raw(sessionTranscript.encodedBytes)
        splice.text(docType)
        splice.embedded(nameSpaces.encodedBytes)
        return CBORSplice.embedded(splice.bytes)
    }

    func write(to splice: inout CBORSplice) {
        splice.mapHead(2)
        splice.text("nameSpaces")
        splice.embedded(nameSpaces.encodedBytes)
        splice.text("deviceAuth")
        splice.mapHead(1)
        switch deviceAuth {
        case .signature(let signature):
            splice.text("deviceSignature")
            splice.raw(signature.encodedBytes)
        case .mac(let mac):
            splice.text("deviceMac")
            splice.raw(mac.encodedBytes)
        }
    }
}
