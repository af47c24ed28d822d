import Foundation
import JOSE
import SDJWT
import WalletCrypto
import WalletEncoding

/// `wallet sdjwt verify <file|-> --issuer-key <jwk|pem> | --anchor <pem> [--aud A --nonce N] [--at <RFC 3339>]`:
/// verifies an SD-JWT (VC) presentation and prints the disclosed claims as JSON.
enum SDJWTCommand {
    static func run(_ arguments: [String]) throws(CLIError) -> String {
        guard arguments.first == "verify" else { throw .usage("sdjwt takes the subcommand verify") }
        var input: String?
        var options: [String: String] = [:]
        var flags: Set<String> = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--legacy-type" {
                flags.insert(argument)
            } else if ["--issuer-key", "--anchor", "--aud", "--nonce", "--at"].contains(argument) {
                guard index + 1 < arguments.count else { throw .usage("\(argument) needs a value") }
                options[argument] = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix("--") && argument != "-" {
                throw .usage("unknown option \(argument)")
            } else {
                guard input == nil else { throw .usage("sdjwt verify takes one input") }
                input = argument
            }
            index += 1
        }
        guard let input else { throw .usage("sdjwt verify needs an input (a file or -)") }
        guard let text = try InputSource.read(input).text else { throw .input("the input is not an SD-JWT") }
        let sdJWT: SDJWT
        do {
            sdJWT = try SDJWT(compact: text)
        } catch {
            throw .input("not an SD-JWT: \(error)")
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
        // A credential typed as SD-JWT VC gets the SD-JWT VC checks; any other typ is checked as a plain SD-JWT.
        let header = sdJWT.issuerSignedJWT.header
        let isVC = header.typeMatches("dc+sd-jwt") || header.typeMatches("vc+sd-jwt")
        let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: issuerKey, now: now, profile: isVC ? .sdJWTVC : .sdJWT,
            acceptsLegacyVCType: flags.contains("--legacy-type"), keyBinding: keyBinding))
        do {
            return JSONValue.object(try verifier.verify(sdJWT).claims).serialized
        } catch {
            throw .failed("SD-JWT verification failed: \(error)")
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
                return JWK(publicKey: try PublicKey(spkiDER: certificate.subjectPublicKeyInfoDER))
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
