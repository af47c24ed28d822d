import Foundation
import WalletEncoding

/// Vector loading for the OpenID4VP tests.
enum VPTestSupport {
    /// `../shared/vectors` beside the repository root.
    static let vectorsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// A vector file under `openid4vp/` as a JSON object.
    static func vector(_ name: String) throws -> JSONObject {
        let data = try Data(contentsOf: vectorsDirectory.appendingPathComponent("openid4vp/\(name)"))
        return try JSONValue.parseObject(Array(data))
    }
}
