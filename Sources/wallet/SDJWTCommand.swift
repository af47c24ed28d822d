import Foundation
import JOSE
import SDJWT
import WalletCrypto
import WalletEncoding

/// `wallet sdjwt verify <file|-> --issuer-key <jwk|pem> | --anchor <pem> [--profile sd-jwt-vc|sd-jwt]
/// [--aud A --nonce N] [--at <RFC 3339>]`: verifies an SD-JWT (VC) presentation under the
/// profile the caller names (SD-JWT VC unless `--profile sd-jwt`) and prints the disclosed
/// claims as JSON.
enum SDJWTCommand {
    static func run(_ arguments: [String]) throws(CLIError) -> String {
        guard arguments.first == "verify" else { throw .usage("sdjwt takes the subcommand verify") }
        let options = try CommandLineOptions(Array(arguments.dropFirst()),
                                             valued: ["--issuer-key", "--anchor", "--aud", "--nonce", "--at", "--profile"],
                                             flags: ["--legacy-type"])
        guard options.positional.count == 1, let input = options.positional.first else {
            throw .usage("sdjwt verify takes one input (a file or -)")
        }
        // The verifier decides the profile, never the token's own typ (issue 12).
        let profile: SDJWTProfile
        switch options["--profile"] ?? "sd-jwt-vc" {
        case "sd-jwt-vc": profile = .sdJWTVC
        case "sd-jwt": profile = .sdJWT
        case let other: throw .usage("--profile is sd-jwt-vc or sd-jwt, not \(other)")
        }
        guard let text = try InputSource.read(input).text else { throw .input("the input is not an SD-JWT") }
        let sdJWT: SDJWT
        do {
            sdJWT = try SDJWT(compact: text)
        } catch {
            throw .rejected("not an SD-JWT", error)
        }

        let issuerKey: IssuerKeySource
        switch (options["--issuer-key"], options["--anchor"]) {
        case (let key?, nil): issuerKey = .jwk(try readKey(key))
        case (nil, let anchor?): issuerKey = .certificateChain(trustAnchors: try readAnchors(anchor))
        default: throw .usage("give exactly one of --issuer-key and --anchor")
        }
        var keyBinding: KeyBindingExpectation?
        switch (options["--aud"], options["--nonce"]) {
        case (let audience?, let nonce?): keyBinding = KeyBindingExpectation(audience: audience, nonce: nonce)
        case (nil, nil): keyBinding = nil
        default: throw .usage("--aud and --nonce go together")
        }
        var now = Date()
        if let at = options["--at"] {
            guard let date = parseTime(at) else { throw .usage("--at takes an RFC 3339 time such as 2025-06-01T12:00:00Z") }
            now = date
        }
        let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: issuerKey, now: now, profile: profile, acceptsLegacyVCType: options.has("--legacy-type"),
            keyBinding: keyBinding))
        do {
            return JSONValue.object(try verifier.verify(sdJWT).claims).serialized
        } catch {
            throw .rejected("SD-JWT verification failed", error)
        }
    }

    /// RFC 3339 date-time, with or without fractional seconds.
    static func parseTime(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// A JWK (JSON) or a PEM public key, from a file or the argument itself.
    static func readKey(_ argument: String) throws(CLIError) -> JWK {
        guard let text = try InputSource.read(argument).text else { throw .input("--issuer-key is not text") }
        if text.hasPrefix("{") {
            do {
                return try JWK(json: text).publicJWK
            } catch {
                throw .input("--issuer-key is not a usable JWK: \(error)")
            }
        }
        if text.contains("-----BEGIN CERTIFICATE-----") {
            do {
                let certificate = try X509Certificate(pemEncoded: text)
                return JWK(publicKey: try certificate.publicKey)
            } catch {
                throw .input("--issuer-key certificate has no usable key: \(error)")
            }
        }
        do {
            return JWK(publicKey: try PublicKey(pem: text))
        } catch {
            throw .input("--issuer-key is neither a JWK nor a PEM public key")
        }
    }

    /// The certificates of a PEM file.
    static func readAnchors(_ argument: String) throws(CLIError) -> [X509Certificate] {
        guard let text = try InputSource.read(argument).text else { throw .input("--anchor is not text") }
        do {
            return try X509Certificate.parsePEM(text)
        } catch {
            throw .input("--anchor holds no PEM certificate: \(error)")
        }
    }
}
