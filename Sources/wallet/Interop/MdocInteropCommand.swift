import CBOR
import COSE
import Foundation
import Mdoc
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// `wallet interop mdoc <subcommand> ...`: the SDK side of `Tests/Interop/test_mdoc_*.py`.
///
///     issue   --issuer-key <d hex> --issuer-cert <DER hex> --device-pub <SEC1 hex>
///             --claims <CBOR hex of {namespace: {identifier: value}}> [--doctype <text>]
///             [--key-authorizations <CBOR hex>]                   prints IssuerSigned hex
///     present --issuer-signed <IssuerSigned hex, or an mdoc {documents: [...]} hex>
///             --device-key <d hex> --request <DeviceRequest hex> --transcript <hex>
///             [--mac-reader-pub <SEC1 hex>] [--consent <CBOR hex of {ns: [ids]}>]
///                                                                 prints DeviceResponse hex
///     wrap    --issuer-signed <hex> [--doctype <text>]            prints {version, documents:
///             [{docType, issuerSigned}], status} hex, the shape pymdoccbor's verifier reads
///
/// Exit status: 0 on success, 1 when building fails (the typed error on standard error),
/// 2 for a usage error.
enum MdocInteropCommand {
    static func run(_ args: [String]) async -> Int32 {
        guard let subcommand = args.first else {
            printError("usage: interop mdoc issue|present|wrap ...")
            return 2
        }
        do {
            let options = try InteropOptions(Array(args.dropFirst()))
            switch subcommand {
            case "issue": print(Hex.encode(try await issue(options)))
            case "present": print(Hex.encode(try await present(options)))
            case "wrap": print(Hex.encode(try wrap(options)))
            default:
                printError("unknown subcommand \(subcommand)")
                return 2
            }
            return 0
        } catch let error as InteropOptions.UsageError {
            printError("usage error: \(error)")
            return 2
        } catch {
            printError("error: \(error)")
            return 1
        }
    }

    private static func issue(_ options: InteropOptions) async throws -> [UInt8] {
        let issuerKey = try ECPrivateKey(d: try options.hexValue("--issuer-key"), curve: .p256)
        let certificate = try X509Certificate(derEncoded: try options.hexValue("--issuer-cert"))
        let devicePublic = try ECPublicKey(x963Representation: try options.hexValue("--device-pub"), curve: .p256)
        guard case .map(let claims) = try CBOR.decode(try options.hexValue("--claims")) else {
            throw InteropOptions.UsageError(description: "--claims is not a CBOR map")
        }
        var nameSpaces: [NameSpaced<DataElement>] = []
        for entry in claims {
            guard let name = entry.key.stringValue, case .map(let elements) = entry.value else {
                throw InteropOptions.UsageError(description: "--claims must map namespaces to maps")
            }
            nameSpaces.append(NameSpaced(nameSpace: name, elements: elements.compactMap { element in
                element.key.stringValue.map { DataElement(identifier: $0, value: element.value) }
            }))
        }
        var authorizations: KeyAuthorizations?
        if let encoded = try options.optionalHex("--key-authorizations") {
            let value = try CBOR.decode(encoded)
            authorizations = KeyAuthorizations(
                nameSpaces: value["nameSpaces"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                dataElements: Dictionary(uniqueKeysWithValues: (value["dataElements"]?.mapValue ?? CBORMap()).compactMap { entry in
                    entry.key.stringValue.map { ($0, entry.value.arrayValue?.compactMap(\.stringValue) ?? []) }
                }))
        }
        let now = Date()
        let issued = try await MdocIssuer(signer: SoftwareSigner(issuerKey), certificateChain: [certificate]).issue(
            docType: options.values["--doctype"] ?? "org.iso.18013.5.1.mDL", nameSpaces: nameSpaces,
            deviceKey: COSEKey(publicKey: .ec(devicePublic)),
            validity: ValidityInfo(signed: now, validFrom: now.addingTimeInterval(-3600), validUntil: now.addingTimeInterval(365 * 86_400)),
            keyAuthorizations: authorizations)
        return issued.encodedBytes
    }

    /// IssuerSigned bytes, or those of the first document of an mdoc as pymdoccbor writes it.
    private static func issuerSigned(_ bytes: [UInt8]) throws -> IssuerSigned {
        let item = try CBOR.decodeItem(bytes)
        if let inner = item["documents"]?[0]?["issuerSigned"] {
            return try IssuerSigned(encoded: Array(inner.encodedBytes))
        }
        return try IssuerSigned(encoded: bytes)
    }

    private static func present(_ options: InteropOptions) async throws -> [UInt8] {
        let credential = try issuerSigned(try options.hexValue("--issuer-signed"))
        let deviceKey = try ECPrivateKey(d: try options.hexValue("--device-key"), curve: .p256)
        let request = try DeviceRequest(encoded: try options.hexValue("--request"))
        let transcript = try SessionTranscript(encoded: try options.hexValue("--transcript"))
        var consented: [String: [String: Set<String>]]?
        if let encoded = try options.optionalHex("--consent") {
            var released: [String: Set<String>] = [:]
            for entry in try CBOR.decode(encoded).mapValue ?? CBORMap() {
                if let name = entry.key.stringValue { released[name] = Set(entry.value.arrayValue?.compactMap(\.stringValue) ?? []) }
            }
            consented = [credential.mobileSecurityObject.docType: released]
        }
        let method: DeviceAuthenticationMethod
        if let readerPublic = try options.optionalHex("--mac-reader-pub") {
            method = .mac(deviceKey: SoftwareKeyAgreement(deviceKey), eReaderKey: try ECPublicKey(x963Representation: readerPublic, curve: .p256))
        } else {
            method = .signature(SoftwareSigner(deviceKey))
        }
        let response = try await DeviceResponseBuilder.respond(to: request, with: [credential], sessionTranscript: transcript,
                                                               consented: consented, authentication: { _ in method })
        return response.encodedBytes
    }

    private static func wrap(_ options: InteropOptions) throws -> [UInt8] {
        let credential = try issuerSigned(try options.hexValue("--issuer-signed"))
        var splice: [UInt8] = CBOR.map(CBORMap([("version", "1.0")])).encoded()
        // {version, documents: [{docType, issuerSigned}], status}, issuerSigned spliced exactly
        splice = [0xa3] + Array(splice.dropFirst())
        splice += CBOR.textString("documents").encoded() + [0x81, 0xa2]
        splice += CBOR.textString("docType").encoded()
        splice += CBOR.textString(options.values["--doctype"] ?? credential.mobileSecurityObject.docType).encoded()
        splice += CBOR.textString("issuerSigned").encoded() + credential.encodedBytes
        splice += CBOR.textString("status").encoded() + [0x00]
        return splice
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
