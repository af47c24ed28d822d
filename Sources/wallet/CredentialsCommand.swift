import CBOR
import Foundation
import JOSE
import Mdoc
import OpenID4VCI
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletStorage

/// `wallet credentials [--json]`, `wallet credentials show <id> [--json]`,
/// `wallet credentials delete <id>`: what the wallet holds.
enum CredentialsCommand {
    static func run(_ arguments: [String], environment: IssueCommand.Environment = IssueCommand.Environment()) async throws(CLIError) -> String {
        let options = try CommandLineOptions(arguments, valued: WalletHome.valuedOptions, flags: WalletHome.flagOptions)
        let home = try WalletHome(options, environment: environment.variables)
        switch options.positional.first {
        case nil, "list":
            guard options.positional.count <= 1 else { throw .usage("credentials list takes no argument") }
            return try await list(home)
        case "show":
            guard options.positional.count == 2 else { throw .usage("credentials show takes one credential id") }
            return try await show(options.positional[1], home: home)
        case "delete":
            guard options.positional.count == 2 else { throw .usage("credentials delete takes one credential id") }
            let id = options.positional[1]
            let (client, _) = try await IssueCommand.openClient(home, environment: environment, encryption: .whenRequired, anchors: [])
            do { try await client.deleteCredential(id) } catch {
                if case .unexpected(.credentialNotFound) = error { throw .input("no credential \(id)") }
                throw .failed("could not delete \(id): \(error)")
            }
            return home.json ? JSONValue.object(["deleted": .string(id)]).serialized : "deleted \(id)"
        case let other?:
            throw .usage("credentials takes list, show <id> or delete <id>, not \(other)")
        }
    }

    private static func list(_ home: WalletHome) async throws(CLIError) -> String {
        let (_, store) = try await home.open()
        let credentials: [StoredCredential]
        do { credentials = try await store.list() } catch { throw .failed("cannot read the store: \(error)") }
        var rows: [JSONObject] = []
        for credential in credentials {
            let remaining = (try? await store.remainingInstances(of: credential.id)) ?? 0
            rows.append(summary(credential, remaining: remaining))
        }
        if home.json { return JSONValue.array(rows.map(JSONValue.object)).serialized }
        guard !rows.isEmpty else { return "no credentials" }
        return rows.map { row in
            let name = row["name"]?.stringValue.map { " \"\($0)\"" } ?? ""
            return "\(row["id"]?.stringValue ?? "")  \(row["format"]?.stringValue ?? "")  \(row["type"]?.stringValue ?? "")\(name)"
                + "  issuer \(row["issuer"]?.stringValue ?? "")  \(row["state"]?.stringValue ?? "")"
                + "  \(row["remaining"]?.intValue ?? 0) left"
        }.joined(separator: "\n")
    }

    private static func summary(_ credential: StoredCredential, remaining: Int) -> JSONObject {
        var row: JSONObject = ["id": .string(credential.id), "format": .string(credential.format.rawValue),
                               "type": .string(credential.type), "issuer": .string(credential.issuer.identifier),
                               "remaining": .integer(Int64(remaining)), "use": .string(credential.policy.use.rawValue)]
        switch credential.state {
        case .issued:
            row["state"] = "issued"
        case .deferred(_, let retryAfter):
            row["state"] = "deferred"
            row["retryAfter"] = retryAfter.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null
        }
        row["name"] = credential.display.first?.name.map(JSONValue.string)
        return row
    }

    private static func show(_ id: String, home: WalletHome) async throws(CLIError) -> String {
        let (area, store) = try await home.open()
        let found: StoredCredential?
        do { found = try await store.credential(id: id) } catch { throw .failed("cannot read the store: \(error)") }
        guard let credential = found else { throw .input("no credential \(id)") }
        let remaining = (try? await store.remainingInstances(of: id)) ?? 0
        var object = summary(credential, remaining: remaining)
        object["instances"] = .integer(Int64(credential.instances.count))
        var keys: [JSONValue] = []
        for instance in credential.instances {
            var entry: JSONObject = ["index": .integer(Int64(instance.index)), "useCount": .integer(Int64(instance.useCount))]
            // Public keys only: the instance's key in the secure area, and the key its
            // credential binds (SD-JWT VC `cnf`, MSO `deviceKey`), which must be the same.
            entry["holderKey"] = (try? await area.keyInfo(alias: instance.keyAlias)).map { JWK(publicKey: $0.publicKey).jsonValue } ?? .null
            entry["boundKey"] = boundKey(of: instance.raw, format: credential.format).map { JWK(publicKey: $0).jsonValue } ?? .null
            keys.append(.object(entry))
        }
        object["instanceKeys"] = .array(keys)
        if let instance = credential.instances.first {
            object["claims"] = claims(of: instance.raw, format: credential.format)
        }
        if home.json { return JSONValue.object(object).serialized }
        return JSONWriter(indent: "  ").string(.object(object))
    }

    /// The holder key a stored credential is bound to: the SD-JWT VC's `cnf.jwk` or the
    /// MSO's `deviceKey`; nil when it names none or does not parse.
    static func boundKey(of raw: [UInt8], format: CredentialFormat) -> PublicKey? {
        switch format {
        case .sdJwtVc:
            guard let text = UTF8Validation.string(raw), let sdJWT = try? SDJWT(compact: text),
                  let key = try? sdJWT.issuerSignedJWT.claims.confirmationKey() else { return nil }
            return try? key.publicKey()
        case .msoMdoc:
            return try? IssuerSigned(encoded: raw).mobileSecurityObject.devicePublicKey()
        }
    }

    /// The claims of a stored credential: the SD-JWT VC's with every disclosure applied,
    /// or the mdoc's elements by namespace.
    static func claims(of raw: [UInt8], format: CredentialFormat) -> JSONValue {
        switch format {
        case .sdJwtVc:
            guard let text = UTF8Validation.string(raw), let sdJWT = try? SDJWT(compact: text),
                  let processed = try? sdJWT.processed() else { return .null }
            return .object(processed.claims.filter { !["_sd_alg", "cnf"].contains($0.key) })
        case .msoMdoc:
            guard let signed = try? IssuerSigned(encoded: raw) else { return .null }
            var nameSpaces = JSONObject()
            for space in signed.nameSpaces {
                nameSpaces[space.nameSpace] = .object(JSONObject(space.elements.map { ($0.item.elementIdentifier, json($0.item.elementValue)) }))
            }
            return .object(nameSpaces)
        }
    }

    /// CBOR as JSON for display: byte strings as base64url, full-dates and tdates as text.
    static func json(_ value: CBOR) -> JSONValue {
        switch value {
        case .unsigned(let number): return Int64(exactly: number).map(JSONValue.integer) ?? .number(Double(number))
        case .negative(let number): return Int64(exactly: number).map { .integer(-1 - $0) } ?? .number(-1 - Double(number))
        case .byteString(let bytes): return .string(Base64URL.encode(bytes))
        case .textString(let text): return .string(text)
        case .array(let elements): return .array(elements.map(json))
        case .map(let map):
            return .object(JSONObject(map.entries.map { entry in (entry.key.stringValue ?? entry.key.diagnostic(), json(entry.value)) }))
        case .tagged(_, let inner): return json(inner)
        case .boolean(let flag): return .bool(flag)
        case .null, .undefined: return .null
        case .simple(let code): return .integer(Int64(code))
        case .half, .float, .double: return value.doubleValue.map(JSONValue.number) ?? .null
        }
    }
}
