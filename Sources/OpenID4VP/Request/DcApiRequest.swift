import Foundation
import WalletEncoding

/// A request as the Digital Credentials API hands it to the wallet (OpenID4VP 1.0
/// App. A): `{"protocol": "openid4vp-v1-...", "data": {...}}`, with the caller's origin
/// the platform asserts.
package struct DcApiRequest: Sendable, Equatable {
    /// The protocol identifiers this wallet answers (App. A.1).
    package enum ProtocolIdentifier: String, Sendable, Hashable {
        /// All parameters in `data`.
        case unsigned = "openid4vp-v1-unsigned"
        /// A compact JWS request object in `data.request`.
        case signed = "openid4vp-v1-signed"
    }

    /// The protocol.
    package let protocolIdentifier: ProtocolIdentifier
    /// The `data` object.
    package let data: JSONObject
    /// The caller's web origin.
    package let origin: String

    /// Reads the platform's request object (JSON text) for a call from `origin`.
    package init(json text: String, origin: String, allowHTTP: Bool) throws(InvalidRequestReason) {
        guard let members = try? JSONValue.parseObject(text), let name = members["protocol"]?.stringValue,
              let dataValue = members["data"] else { throw .malformedDcApiRequest }
        guard let identifier = ProtocolIdentifier(rawValue: name) else { throw .unsupportedDcApiProtocol(name) }
        var data: JSONObject
        if let object = dataValue.objectValue {
            data = object
        } else if let embedded = dataValue.stringValue, let object = try? JSONValue.parseObject(embedded) {
            // Some platforms hand `data` over as a JSON string.
            data = object
        } else {
            throw .malformedDcApiRequest
        }
        guard Self.isWebOrigin(origin, allowHTTP: allowHTTP) else { throw .invalidOrigin(origin) }
        if identifier == .unsigned {
            // App. A.2: the wallet ignores client_id and expected_origins in unsigned requests.
            data.removeValue(forKey: "client_id")
            data.removeValue(forKey: "expected_origins")
        }
        self.protocolIdentifier = identifier
        self.data = data
        self.origin = origin
    }

    /// `scheme://host[:port]` with nothing after it: `https`, or `http` on loopback when allowed.
    static func isWebOrigin(_ origin: String, allowHTTP: Bool) -> Bool {
        guard let url = URL(string: origin), url.host != nil, url.path.isEmpty, url.query == nil, url.fragment == nil,
              url.user == nil else { return false }
        switch url.scheme {
        case "https": return true
        case "http": return allowHTTP && ResolvedRequest.isLoopback(url)
        default: return false
        }
    }

    /// App. A.2: `expected_origins` of a signed request must list the caller's origin,
    /// compared as plain strings.
    static func checkExpectedOrigins(_ parameters: JSONObject, origin: String) throws(InvalidRequestReason) {
        guard let value = parameters["expected_origins"], !value.isNull else { throw .missingExpectedOrigins }
        guard let origins = value.stringArrayValue, !origins.isEmpty else { throw .invalidParameter("expected_origins") }
        guard origins.contains(origin) else { throw .originNotExpected(origin) }
    }
}
