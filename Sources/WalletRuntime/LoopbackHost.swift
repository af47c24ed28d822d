import Foundation

/// Which hosts are this machine's loopback: the only ones the SDK talks plain `http`
/// to, and then only when the app allows it (local reference parties, tests).
package enum LoopbackHost {
    /// Whether `url`'s host is `localhost`, an IPv4 address in 127.0.0.0/8 or the IPv6 `::1`.
    package static func contains(_ url: URL) -> Bool {
        guard let host = URLComponents(url: url, resolvingAgainstBaseURL: false)?.host else { return false }
        return isLoopback(host: host)
    }

    /// Whether `host` (as in a URL, IPv6 with or without brackets) names the loopback.
    package static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "localhost." { return true }
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        // A dotted-quad IPv4 literal whose first octet is 127 (RFC 1122 §3.2.1.3).
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        for octet in octets {
            guard (1...3).contains(octet.count), octet.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int(octet), value <= 255 else { return false }
        }
        return octets[0] == "127"
    }
}
