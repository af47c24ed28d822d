import CBOR
import Foundation
import JOSE
import Mdoc
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// `wallet mdoc verify --response <hex|path> --transcript <hex|path> --anchor <pem>...
/// [--reader-key <hex d>] [--at <RFC 3339>]`: verifies a DeviceResponse as a reader and
/// prints the verified elements as JSON (byte strings base64url, dates ISO 8601).
enum MdocCommand {
    static func run(_ arguments: [String]) async throws(CLIError) -> String {
        guard arguments.first == "verify" else { throw .usage("mdoc takes the subcommand verify") }
        var response: String?, transcript: String?, readerKey: String?, at: String?
        var anchors: [String] = []
        var index = 1
        while index < arguments.count {
            let name = arguments[index]
            guard index + 1 < arguments.count else { throw .usage("\(name) needs a value") }
            let value = arguments[index + 1]
            switch name {
            case "--response": response = value
            case "--transcript": transcript = value
            case "--anchor": anchors.append(value)
            case "--reader-key": readerKey = value
            case "--at": at = value
            default: throw .usage("unknown mdoc verify option \(name)")
            }
            index += 2
        }
        guard let response, let transcript, !anchors.isEmpty else {
            throw .usage("mdoc verify needs --response, --transcript and at least one --anchor")
        }
        let parsedResponse: DeviceResponse
        let sessionTranscript: SessionTranscript
        do {
            parsedResponse = try DeviceResponse(encoded: try InputSource.read(response).binary)
            sessionTranscript = try SessionTranscript(encoded: try InputSource.read(transcript).binary)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .rejected("cannot read the response or transcript", error)
        }
        var trustAnchors: [X509Certificate] = []
        for anchor in anchors {
            let source = try InputSource.read(anchor)
            do {
                if let text = source.text, text.contains("-----BEGIN") {
                    trustAnchors += try X509Certificate.parsePEM(text)
                } else {
                    trustAnchors.append(try X509Certificate(derEncoded: source.binary))
                }
            } catch {
                throw .input("cannot read the anchor \(source.origin): \(error)")
            }
        }
        var eReaderKey: ECPrivateKey?
        if let readerKey {
            guard let scalar = Hex.decode(readerKey), let key = try? ECPrivateKey(d: scalar, curve: .p256) else {
                throw .input("--reader-key is not the hex scalar of a P-256 key")
            }
            eReaderKey = key
        }
        var time = Date()
        if let at {
            do { time = try CBOR.tagged(0, .textString(at)).dateValue() } catch { throw .input("--at is not an RFC 3339 time") }
        }
        let verified: VerifiedResponse
        do {
            verified = try await DeviceResponseVerifier(trustAnchors: trustAnchors, sessionTranscript: sessionTranscript,
                                                        eReaderKey: eReaderKey.map(SoftwareKeyAgreement.init)).verify(parsedResponse, at: time)
        } catch {
            throw .rejected("verification failed", error)
        }
        return json(verified).serialized
    }

    static func json(_ verified: VerifiedResponse) -> JSONValue {
        .object([
            "status": .integer(Int64(clamping: verified.status.rawValue)),
            "documents": .array(verified.documents.map(json)),
            "documentErrors": .array(verified.documentErrors.map { .object(["docType": .string($0.docType), "code": .integer(Int64($0.code))]) }),
        ])
    }

    static func json(_ document: VerifiedDocument) -> JSONValue {
        func elements(_ spaces: [NameSpaced<DataElement>]) -> JSONValue {
            .object(Dictionary(spaces.map { ($0.nameSpace, JSONValue.object(Dictionary($0.elements.map { ($0.identifier, json($0.value)) },
                                                                                       uniquingKeysWith: { first, _ in first }))) },
                               uniquingKeysWith: { first, _ in first }))
        }
        let validity = document.mobileSecurityObject.validityInfo
        var validityJSON: JSONObject = ["signed": .string(iso(validity.signed)), "validFrom": .string(iso(validity.validFrom)),
                                                 "validUntil": .string(iso(validity.validUntil))]
        if let expected = validity.expectedUpdate { validityJSON["expectedUpdate"] = .string(iso(expected)) }
        return .object([
            "docType": .string(document.docType),
            "deviceAuthentication": .string(document.deviceAuthentication.rawValue),
            "issuer": .string(String(describing: document.issuerChain.leaf.subject)),
            "validityInfo": .object(validityJSON),
            "issuerSigned": elements(document.issuerSigned),
            "deviceSigned": elements(document.deviceSigned),
            "errors": .object(Dictionary(document.errors.map { space in
                (space.nameSpace, JSONValue.object(Dictionary(space.elements.map { ($0.identifier, JSONValue.integer(Int64($0.code))) },
                                                              uniquingKeysWith: { first, _ in first })))
            }, uniquingKeysWith: { first, _ in first })),
        ])
    }

    /// A CBOR value as JSON: byte strings base64url, tdate/full-date as ISO 8601 text.
    static func json(_ value: CBOR) -> JSONValue {
        switch value {
        case .unsigned(let number): return number <= UInt64(Int64.max) ? .integer(Int64(number)) : .number(Double(number))
        case .negative(let number): return number < UInt64(Int64.max) ? .integer(-1 - Int64(number)) : .number(-1 - Double(number))
        case .byteString(let bytes): return .string(Base64URL.encode(bytes))
        case .textString(let text): return .string(text)
        case .array(let elements): return .array(elements.map(json))
        case .map(let map):
            var object: JSONObject = [:]
            for entry in map {
                let key = entry.key.stringValue ?? entry.key.description
                if object[key] == nil { object[key] = json(entry.value) }
            }
            return .object(object)
        case .tagged(0, _), .tagged(1, _):
            if let date = try? value.dateValue() { return .string(iso(date)) }
            return .null
        case .tagged(1004, .textString(let text)): return .string(text)
        case .tagged(_, let content): return json(content)
        case .boolean(let flag): return .bool(flag)
        case .null, .undefined, .simple: return .null
        case .half, .float, .double:
            guard let number = value.doubleValue, number.isFinite else { return .null }
            return .number(number)
        }
    }

    static func iso(_ date: Date) -> String {
        (try? CBOR.dateTime(date).tagContent?.stringValue) ?? ISO8601DateFormatter().string(from: date)
    }
}
