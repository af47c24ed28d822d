import Foundation

/// Base64url without padding (RFC 4648 §5), the encoding of JOSE, SD-JWT and
/// OpenID parameters. This is the SDK's one home for it (DESIGN rule 8).
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes base64url, with or without padding. Returns `nil` for any character
    /// outside the base64url alphabet (standard `+` and `/` are rejected too), for
    /// a length that no encoding produces, or for misplaced padding.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var body = Substring(text)
        var padding = 0
        while body.hasSuffix("=") { body.removeLast(); padding += 1 }
        guard padding <= 2 else { return nil }
        for scalar in body.unicodeScalars {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "-", "_": continue
            default: return nil
            }
        }
        if body.count % 4 == 1 { return nil }
        if padding > 0 && (body.count + padding) % 4 != 0 { return nil }
        var standard = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = standard.count % 4
        if remainder > 0 { standard += String(repeating: "=", count: 4 - remainder) }
        guard let data = Data(base64Encoded: standard) else { return nil }
        return [UInt8](data)
    }
}
