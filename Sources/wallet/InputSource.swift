import Foundation
import WalletRuntime
import WalletEncoding

/// What the user handed to a command: a path, `-` for standard input, or the
/// data itself (hex, base64url, a compact JWS/JWE, PEM).
struct InputSource {
    /// The raw bytes read (file contents or the literal argument's UTF-8).
    let bytes: [UInt8]
    /// Where they came from, for messages.
    let origin: String

    /// Inputs larger than this are refused before being read into memory.
    static let maxSize = 64 * 1024 * 1024

    /// Reads `argument`: `-` is standard input, an existing file is read whole,
    /// anything else is taken literally.
    static func read(_ argument: String) throws(CLIError) -> InputSource {
        if argument == "-" {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            guard data.count <= maxSize else { throw .input("standard input is larger than \(maxSize) bytes") }
            return InputSource(bytes: [UInt8](data), origin: "standard input")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw .input("\(argument) is a directory") }
            let attributes = try? FileManager.default.attributesOfItem(atPath: argument)
            if let size = attributes?[.size] as? Int, size > maxSize {
                throw .input("\(argument) is larger than \(maxSize) bytes")
            }
            guard let data = FileManager.default.contents(atPath: argument) else { throw .input("cannot read \(argument)") }
            return InputSource(bytes: [UInt8](data), origin: argument)
        }
        return InputSource(bytes: Array(argument.utf8), origin: "the argument")
    }

    /// The input as trimmed text, if it is entirely printable UTF-8.
    var text: String? {
        guard let string = UTF8Validation.string(bytes) else { return nil }
        let trimmed = string.trimmingWhitespace()
        let printable = trimmed.unicodeScalars.allSatisfy { $0.value >= 0x20 || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return printable && !trimmed.isEmpty ? trimmed : nil
    }

    /// Binary content: text inputs in hex or base64url are decoded (whitespace
    /// ignored), anything else is taken as the bytes themselves.
    var binary: [UInt8] {
        guard let text else { return bytes }
        let compact = text.filter { !$0.isWhitespace }
        if let hex = Hex.decode(compact) { return hex }
        if let decoded = Base64URL.decode(compact) { return decoded }
        if let data = Base64.decode(compact) { return data }
        return bytes
    }
}

/// A failure the CLI reports as one line on standard error.
enum CLIError: Error {
    /// The command line is wrong; the usage text follows the message. Exit 2.
    case usage(String)
    /// The input could not be read or understood. Exit 1.
    case input(String)
    /// A check failed (a signature, a chain, a decryption). Exit 1.
    case failed(String)
    /// The SDK refused the input with a typed error. Exit 1; the line carries the error's
    /// stable identifier in brackets (e.g. `[MdocError.untrustedIssuer.leafIsCA]`).
    case rejected(String, any Error)

    var message: String {
        switch self {
        case .usage(let text), .input(let text), .failed(let text): return text
        case .rejected(let what, let error): return "\(what) [\(ErrorIdentifier.of(error))]: \(error)"
        }
    }

    var exitCode: Int32 {
        if case .usage = self { return 2 }
        return 1
    }
}
