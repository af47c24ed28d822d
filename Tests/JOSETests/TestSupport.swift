import Foundation
import JOSE
import WalletCrypto
import Testing
import WalletRuntime
import WalletEncoding

/// Helpers shared by the JOSE suites.
enum Fixtures {
    /// `/work/wt-jose/Tests/JOSETests/<file>` → the repository root is three levels up.
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let repositoryRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()

    /// A vector under `../shared/vectors/` (sibling of the repository root).
    static func sharedVector(_ relativePath: String) throws -> JSONValue {
        let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors/\(relativePath)")
        return try JSONValue.parse([UInt8](Data(contentsOf: url)))
    }

    /// A vector under `Tests/JOSETests/Vectors/`.
    static func localVector(_ name: String) throws -> JSONValue {
        let url = testsDirectory.appendingPathComponent("Vectors/\(name)")
        return try JSONValue.parse([UInt8](Data(contentsOf: url)))
    }

    static func jwk(_ value: JSONValue?) throws -> JWK {
        let members = try #require(value?.objectValue, "fixture is not a JWK object")
        return try JWK(members: members)
    }

    static func curveKey(_ algorithm: JWSAlgorithm) throws -> SoftwareSigner {
        switch algorithm {
        case .es256: return SoftwareSigner(try ECPrivateKey.generate(curve: .p256))
        case .es384: return SoftwareSigner(try ECPrivateKey.generate(curve: .p384))
        case .es512: return SoftwareSigner(try ECPrivateKey.generate(curve: .p521))
        case .edDSA, .hs256: return SoftwareSigner(try Ed25519PrivateKey.generate())
        }
    }

    /// Re-encodes one part of a compact serialization through `change`.
    static func replacingPart(_ index: Int, of compact: String, with change: ([UInt8]) -> [UInt8]) -> String {
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let decoded = Base64URL.decode(parts[index]) ?? []
        parts[index] = Base64URL.encode(change(decoded))
        return parts.joined(separator: ".")
    }

    /// A compact JWS with `header` JSON text as its header and the other parts of `compact`.
    static func replacingHeader(of compact: String, with header: String) -> String {
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[0] = Base64URL.encode(Array(header.utf8))
        return parts.joined(separator: ".")
    }
}

/// A signer that hands back whatever bytes it is given, to test length checks.
struct FixedOutputSigner: Signer {
    let algorithm: SignatureAlgorithm
    let publicKey: PublicKey
    let output: [UInt8]
    func sign(_ message: [UInt8]) async throws(KeyOperationError) -> [UInt8] { output }
}
