import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// Vector loading and a small PKI (IACA → document signer, reader root → reader) for the tests.
enum MdocTestSupport {
    /// `../shared/vectors` beside the repository root.
    static let vectorsDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    struct Failure: Error, CustomStringConvertible { let description: String }

    static func json(_ relativePath: String) throws -> [String: Any] {
        let data = try Data(contentsOf: vectorsDirectory.appendingPathComponent(relativePath))
        guard let object = untyped(try JSONValue.parse([UInt8](data))) as? [String: Any] else {
            throw Failure(description: "\(relativePath) is not a JSON object")
        }
        return object
    }

    /// A parsed JSON value as the `[String: Any]` / `[Any]` / `String` / `Int` / `Double` /
    /// `Bool` / `NSNull` tree the vector helpers walk. Parsing is WalletEncoding's (the
    /// SDK's one JSON home).
    static func untyped(_ value: JSONValue) -> Any {
        switch value {
        case .object(let members): return Dictionary(uniqueKeysWithValues: members.map { ($0.key, untyped($0.value)) })
        case .array(let items): return items.map(untyped)
        case .string(let text): return text
        case .bool(let flag): return flag
        case .null: return NSNull()
        default: return value.intValue.map { $0 as Any } ?? value.doubleValue.map { $0 as Any } ?? NSNull()
        }
    }


    /// `section.key` of a vector file as hex-decoded bytes.
    static func hex(_ file: [String: Any], _ section: String, _ key: String) throws -> [UInt8] {
        guard let text = (file[section] as? [String: Any])?[key] as? String, let bytes = Hex.decode(text) else {
            throw Failure(description: "no hex \(section).\(key)")
        }
        return bytes
    }

    static func string(_ file: [String: Any], _ section: String, _ key: String) throws -> String {
        guard let text = (file[section] as? [String: Any])?[key] as? String else { throw Failure(description: "no \(key)") }
        return text
    }

    /// An Annex D P-256 key from annex_d_keys.json.
    static func annexKey(_ name: String) throws -> ECPrivateKey {
        let keys = try json("mdoc/annex_d_keys.json")
        guard let key = (keys["expected"] as? [String: Any])?[name] as? [String: Any], let d = key["d"] as? String,
              let scalar = Hex.decode(d) else { throw Failure(description: "no key \(name)") }
        return try ECPrivateKey(d: scalar, curve: .p256)
    }

    static func date(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text) ?? Date(timeIntervalSince1970: 0)
    }

    /// A CA and a leaf for `leafKey`, valid around now.
    struct PKI {
        let anchor: X509Certificate
        let leaf: X509Certificate
        let leafKey: ECPrivateKey
        var signer: SoftwareSigner { SoftwareSigner(leafKey) }
    }

    /// Which ISO 18013-5 certificate profile a test PKI follows.
    enum Role { case issuer, reader }

    /// An IACA and document signer (`.issuer`), or a reader root and reader
    /// authentication certificate (`.reader`), per ISO 18013-5 Annex B.
    static func pki(_ name: String, role: Role = .issuer, notBefore: Date = Date().addingTimeInterval(-86_400),
                    notAfter: Date = Date().addingTimeInterval(365 * 86_400)) throws -> PKI {
        let rootKey = try ECPrivateKey.generate(curve: .p256)
        let leafKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.iaca(
            subject: try DistinguishedName([(.commonName, "\(name) root"), (.country, "UT")]),
            notBefore: notBefore, notAfter: notAfter).selfSigned(with: .ec(rootKey))
        let subject = try DistinguishedName([(.commonName, "\(name) leaf"), (.country, "UT")])
        let spki = try leafKey.publicKey.spkiDER
        let builder = role == .issuer
            ? CertificateBuilder.mdocDocumentSigner(subject: subject, subjectPublicKeyInfoDER: spki,
                                                    notBefore: notBefore, notAfter: notAfter)
            : CertificateBuilder.mdocReaderAuthentication(subject: subject, subjectPublicKeyInfoDER: spki,
                                                          notBefore: notBefore, notAfter: notAfter)
        return PKI(anchor: root, leaf: try builder.signed(by: root, key: .ec(rootKey)), leafKey: leafKey)
    }

    static let mDL = "org.iso.18013.5.1.mDL"
    static let mDLNameSpace = "org.iso.18013.5.1"

    /// An mDL for `deviceKey`, valid from yesterday for a year.
    static func issueMDL(issuer: PKI, deviceKey: ECPublicKey, keyAuthorizations: KeyAuthorizations? = nil,
                         validity: ValidityInfo? = nil) async throws -> IssuerSigned {
        let now = Date()
        let window = validity ?? ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-86_400),
                                              validUntil: now.addingTimeInterval(365 * 86_400))
        return try await MdocIssuer(signer: issuer.signer, certificateChain: [issuer.leaf]).issue(
            docType: mDL,
            nameSpaces: [NameSpaced(mDLNameSpace, [DataElement("family_name", "Doe"), DataElement("given_name", "John"),
                                                   DataElement("birth_date", CBOR.fullDate(try CBORFullDate(year: 1980, month: 5, day: 1))),
                                                   DataElement("age_over_18", true), DataElement("document_number", "123456789")])],
            deviceKey: COSEKey(publicKey: .ec(deviceKey)), validity: window, keyAuthorizations: keyAuthorizations)
    }

    static func mDLRequest(_ elements: [String] = ["family_name", "age_over_18"], docType: String = mDL) -> ItemsRequest {
        ItemsRequest(docType: docType, nameSpaces: [NameSpaced(mDLNameSpace, elements.map { RequestedElement($0, false) })])
    }

    /// A QR-engagement transcript with fresh ephemeral keys.
    static func transcript() throws -> (SessionTranscript, eDeviceKey: ECPrivateKey, eReaderKey: ECPrivateKey) {
        let eDeviceKey = try ECPrivateKey.generate(curve: .p256)
        let eReaderKey = try ECPrivateKey.generate(curve: .p256)
        let engagement = DeviceEngagement(security: EngagementSecurity(eDeviceKey: eDeviceKey.publicKey))
        let readerKeyBytes = COSEKey(publicKey: .ec(eReaderKey.publicKey)).encoded()
        return (SessionTranscript(deviceEngagement: engagement, eReaderKeyEncoded: readerKeyBytes, handover: .qr),
                eDeviceKey, eReaderKey)
    }
}
