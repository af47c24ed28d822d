import CBOR
import COSE
import Foundation
import WalletCrypto

/// Which data elements the device key may sign in DeviceSigned (ISO 18013-5 §9.1.2.4):
/// `{? "nameSpaces": [+ tstr], ? "dataElements": {tstr => [+ tstr]}}`.
public struct KeyAuthorizations: Sendable, Hashable {
    /// Namespaces all of whose elements are authorized.
    public var nameSpaces: [String]
    /// Individually authorized elements, by namespace.
    public var dataElements: [String: [String]]

    /// Authorizations for whole namespaces and single elements.
    public init(nameSpaces: [String] = [], dataElements: [String: [String]] = [:]) {
        self.nameSpaces = nameSpaces
        self.dataElements = dataElements
    }

    /// True when the device key may sign `elementIdentifier` of `nameSpace`.
    public func authorizes(nameSpace: String, elementIdentifier: String) -> Bool {
        nameSpaces.contains(nameSpace) || dataElements[nameSpace]?.contains(elementIdentifier) == true
    }

    var cbor: CBOR {
        var map = CBORMap()
        if !nameSpaces.isEmpty { map.append(key: "nameSpaces", value: .array(nameSpaces.map(CBOR.textString))) }
        if !dataElements.isEmpty {
            map.append(key: "dataElements", value: .map(CBORMap(dataElements.keys.sorted().map { key in
                (CBOR.textString(key), CBOR.array((dataElements[key] ?? []).map(CBOR.textString)))
            })))
        }
        return .map(map)
    }

    init(cbor: CBOR) throws(MdocError) {
        guard case .map(let map) = cbor else { throw .malformed("keyAuthorizations", .wrongType(expected: .map)) }
        var spaces: [String] = []
        if let list = map["nameSpaces"] {
            guard let array = list.arrayValue else { throw .malformed("keyAuthorizations nameSpaces", .wrongType(expected: .array)) }
            for entry in array {
                guard let name = entry.stringValue else { throw .malformed("keyAuthorizations nameSpaces entry", .wrongType(expected: .textString)) }
                spaces.append(name)
            }
        }
        var elements: [String: [String]] = [:]
        if let dataElements = map["dataElements"] {
            guard case .map(let byNameSpace) = dataElements else { throw .malformed("keyAuthorizations dataElements", .wrongType(expected: .map)) }
            for entry in byNameSpace {
                guard let name = entry.key.stringValue, let ids = entry.value.arrayValue else {
                    throw .malformed("keyAuthorizations dataElements entry", .wrongType(expected: .array))
                }
                var list: [String] = []
                for id in ids {
                    guard let text = id.stringValue else { throw .malformed("keyAuthorizations data element", .wrongType(expected: .textString)) }
                    list.append(text)
                }
                elements[name] = list
            }
        }
        self.init(nameSpaces: spaces, dataElements: elements)
    }
}

/// When an MSO was signed and how long it is valid (ISO 18013-5 §9.1.2.4), all tdate.
public struct ValidityInfo: Sendable, Hashable {
    /// When the MSO was signed.
    public var signed: Date
    /// Start of validity.
    public var validFrom: Date
    /// End of validity.
    public var validUntil: Date
    /// When the issuer expects to re-sign, if given.
    public var expectedUpdate: Date?

    /// A validity window.
    public init(signed: Date, validFrom: Date, validUntil: Date, expectedUpdate: Date? = nil) {
        self.signed = signed
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.expectedUpdate = expectedUpdate
    }
}

/// The Mobile Security Object: digests of every issued element, the device key and the
/// validity, signed by the issuer as the payload of issuerAuth (ISO 18013-5 §9.1.2.4).
public struct MobileSecurityObject: Sendable, Hashable {
    /// "1.0".
    public let version: String
    /// "SHA-256", "SHA-384" or "SHA-512".
    public let digestAlgorithm: String
    /// Digests by namespace and digestID.
    public let valueDigests: [String: [UInt64: [UInt8]]]
    /// The holder's device key.
    public let deviceKey: COSEKey
    /// What the device key may sign, if restricted.
    public let keyAuthorizations: KeyAuthorizations?
    /// Extra device key information, as decoded.
    public let keyInfo: CBOR?
    /// The document type.
    public let docType: String
    /// The validity window.
    public let validityInfo: ValidityInfo
    /// The MSO encoding (content of MobileSecurityObjectBytes), as signed.
    public let encodedBytes: [UInt8]

    /// The hash algorithm named by ``digestAlgorithm``.
    /// - Throws: `unsupportedDigestAlgorithm`.
    public func hashAlgorithm() throws(MdocError) -> HashAlgorithm {
        guard let algorithm = HashAlgorithm(rawValue: digestAlgorithm) else { throw .unsupportedDigestAlgorithm(digestAlgorithm) }
        return algorithm
    }

    /// The device key as a public key.
    public func devicePublicKey() throws(MdocError) -> PublicKey {
        do { return try deviceKey.publicKey() } catch { throw .cose(error) }
    }

    /// Builds and encodes an MSO (namespaces and digestIDs in ascending order).
    public init(digestAlgorithm: HashAlgorithm = .sha256, valueDigests: [String: [UInt64: [UInt8]]], deviceKey: COSEKey,
                keyAuthorizations: KeyAuthorizations? = nil, docType: String, validityInfo: ValidityInfo) throws(MdocError) {
        version = "1.0"
        self.digestAlgorithm = digestAlgorithm.rawValue
        self.valueDigests = valueDigests
        self.deviceKey = deviceKey.publicOnly
        self.keyAuthorizations = keyAuthorizations
        self.keyInfo = nil
        self.docType = docType
        self.validityInfo = validityInfo
        var deviceKeyInfo = CBORMap()
        deviceKeyInfo.append(key: "deviceKey", value: self.deviceKey.cbor)
        if let keyAuthorizations { deviceKeyInfo.append(key: "keyAuthorizations", value: keyAuthorizations.cbor) }
        var validity = CBORMap()
        do {
            validity.append(key: "signed", value: try CBOR.dateTime(Self.wholeSeconds(validityInfo.signed)))
            validity.append(key: "validFrom", value: try CBOR.dateTime(Self.wholeSeconds(validityInfo.validFrom)))
            validity.append(key: "validUntil", value: try CBOR.dateTime(Self.wholeSeconds(validityInfo.validUntil)))
            if let expected = validityInfo.expectedUpdate {
                validity.append(key: "expectedUpdate", value: try CBOR.dateTime(Self.wholeSeconds(expected)))
            }
        } catch {
            throw .cbor(error)
        }
        let digests = CBORMap(valueDigests.keys.sorted().map { nameSpace in
            let byID = valueDigests[nameSpace] ?? [:]
            return (CBOR.textString(nameSpace), CBOR.map(CBORMap(byID.keys.sorted().map { id in
                (CBOR.unsigned(id), CBOR.byteString(byID[id] ?? []))
            })))
        })
        encodedBytes = CBOR.map(CBORMap([("version", .textString(version)), ("digestAlgorithm", .textString(self.digestAlgorithm)),
                                 ("valueDigests", .map(digests)), ("deviceKeyInfo", .map(deviceKeyInfo)),
                                 ("docType", .textString(docType)), ("validityInfo", .map(validity))])).encoded()
    }

    /// tdate carries no fractional seconds (ISO 18013-5 §7.2.1).
    private static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    /// Parses an MSO (the content of MobileSecurityObjectBytes).
    public init(encoded bytes: [UInt8]) throws(MdocError) {
        try self.init(item: try MdocDecoding.item(bytes))
    }

    init(item: CBORItem) throws(MdocError) {
        let what = "MobileSecurityObject"
        version = try item.required("version", in: what).text("MSO version")
        guard version.hasPrefix("1.") else { throw .unsupportedVersion(version) }
        digestAlgorithm = try item.required("digestAlgorithm", in: what).text("digestAlgorithm")
        var digests: [String: [UInt64: [UInt8]]] = [:]
        for (nameSpace, byID) in try item.required("valueDigests", in: what).requiredMap("valueDigests") {
            let name = try nameSpace.text("valueDigests namespace")
            var entries: [UInt64: [UInt8]] = [:]
            for (id, digest) in try byID.requiredMap("DigestIDs") {
                entries[try id.unsigned("digestID")] = try digest.bytes("digest")
            }
            digests[name] = entries
        }
        valueDigests = digests
        let deviceKeyInfo = try item.required("deviceKeyInfo", in: what)
        let deviceKeyItem = try deviceKeyInfo.required("deviceKey", in: "deviceKeyInfo")
        do {
            deviceKey = try COSEKey(cbor: deviceKeyItem.value)
        } catch {
            throw .cose(error)
        }
        keyAuthorizations = try deviceKeyInfo["keyAuthorizations"].map { item throws(MdocError) in
            try KeyAuthorizations(cbor: item.value)
        }
        keyInfo = deviceKeyInfo["keyInfo"]?.value
        docType = try item.required("docType", in: what).text("docType")
        let validity = try item.required("validityInfo", in: what)
        validityInfo = ValidityInfo(
            signed: try validity.required("signed", in: "validityInfo").date("signed"),
            validFrom: try validity.required("validFrom", in: "validityInfo").date("validFrom"),
            validUntil: try validity.required("validUntil", in: "validityInfo").date("validUntil"),
            expectedUpdate: try validity["expectedUpdate"].map { item throws(MdocError) in try item.date("expectedUpdate") })
        encodedBytes = item.exactBytes
    }
}
