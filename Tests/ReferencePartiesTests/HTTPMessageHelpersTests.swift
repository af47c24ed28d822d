import WalletEncoding
import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletRuntime

/// The 400 `invalid_request` a parsing helper ends the exchange with, or nil.
private func invalidRequest(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch {
        guard case .response(let response) = error as? HTTPHandlerError, response.status == 400,
              let json = try? JSONValue.parse(response.body), json["error"] == "invalid_request" else { return nil }
        return json["error_description"]?.stringValue ?? ""
    }
}

@Suite("Request parsing helpers")
struct RequestParsingTests {
    private let form: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]

    @Test("a form body is read when the request says it is one, with or without charset=UTF-8")
    func formBody() throws {
        let body = Array("grant_type=x&tx_code=12+34".utf8)
        let plain = try request(.post, "/t", headers: form, body: body).formParameters()
        #expect(plain["tx_code"] == "12 34")
        let withCharset = try request(.post, "/t", headers: ["content-type": "Application/X-WWW-Form-URLEncoded ; charset=\"UTF-8\""],
                                      body: body).formParameters()
        #expect(withCharset == plain)
        #expect(try request(.post, "/t", headers: form).formParameters().isEmpty)
    }

    @Test("a form body is refused with invalid_request under another media type, another charset, or when malformed")
    func formBodyRefused() {
        let body = Array("a=1".utf8)
        #expect(invalidRequest { _ = try request(.post, "/t", body: body).formParameters() } == "expected Content-Type application/x-www-form-urlencoded")
        #expect(invalidRequest { _ = try request(.post, "/t", headers: ["Content-Type": "application/json"], body: body).formParameters() } != nil)
        #expect(invalidRequest {
            _ = try request(.post, "/t", headers: ["Content-Type": "application/x-www-form-urlencoded; charset=ISO-8859-1"], body: body).formParameters()
        } == "only UTF-8 bodies are accepted")
        #expect(invalidRequest { _ = try request(.post, "/t", headers: form, body: Array("a=%G0".utf8)).formParameters() }
            == "malformed form body: malformed percent escape at offset 2")
        #expect(invalidRequest { _ = try request(.post, "/t", headers: form, body: Array("a=1&&b=2".utf8)).formParameters() } != nil)
    }

    @Test("OAuth parameters: empty counts as absent, repeated is refused")
    func oauthParameterRules() throws {
        let parameters = try FormURLEncoding.decode("a=1&empty=&twice=1&twice=2")
        #expect(try parameters.requiredValue("a") == "1")
        #expect(try parameters.optionalValue("empty") == nil)
        #expect(try parameters.optionalValue("absent") == nil)
        #expect(invalidRequest { _ = try parameters.requiredValue("empty") } == "missing parameter empty")
        #expect(invalidRequest { _ = try parameters.requiredValue("absent") } == "missing parameter absent")
        #expect(invalidRequest { _ = try parameters.optionalValue("twice") } == "parameter twice is repeated")
        #expect(invalidRequest { _ = try parameters.requiredValue("twice") } == "parameter twice is repeated")
    }

    @Test("query parameters are decoded strictly; no query is no parameters")
    func query() throws {
        #expect(try request(.get, "/authorize?client_id=c&redirect_uri=https%3A%2F%2Fw.example%2Fcb").queryParameters()["redirect_uri"]
            == "https://w.example/cb")
        #expect(try request(.get, "/authorize").queryParameters().isEmpty)
        #expect(invalidRequest { _ = try request(.get, "/authorize?a=%C3").queryParameters() }
            == "malformed query: not UTF-8 after decoding, at offset 2")
        #expect(invalidRequest { _ = try request(.get, "/authorize?flag").queryParameters() } != nil)
    }

    @Test("a JSON body is parsed strictly and only under application/json")
    func jsonBody() throws {
        let json: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]
        #expect(try request(.post, "/c", headers: json, body: Array(#"{"proof":{"jwt":"x"}}"#.utf8)).jsonBody()["proof"]?["jwt"] == "x")
        #expect(invalidRequest { _ = try request(.post, "/c", headers: json, body: Array(#"{"a":1,"a":2}"#.utf8)).jsonBody() }
            == "the body is not a JSON document")
        #expect(invalidRequest { _ = try request(.post, "/c", headers: json).jsonBody() } != nil)
        #expect(invalidRequest { _ = try request(.post, "/c", headers: ["Content-Type": "application/jwt"], body: Array("{}".utf8)).jsonBody() }
            == "expected Content-Type application/json")
    }

    @Test("the media type is the Content-Type without parameters, lower-cased; the path stays percent-encoded")
    func mediaTypeAndPath() {
        #expect(request(.post, "/x", headers: ["Content-Type": " Application/JWT ;x=y"]).mediaType == "application/jwt")
        #expect(request(.post, "/x").mediaType == nil)
        #expect(request(.get, "/a%2Fb/c?x=1").path == "/a%2Fb/c")
        #expect(HTTPRequest(url: URL(string: "http://reference.test")!).path == "/")
    }
}

@Suite("Response helpers")
struct ResponseHelperTests {
    @Test("json writes the compact serialization with its media type")
    func json() {
        let response = HTTPResponse.json(["b": 1, "a": ["x", true]], status: 201, headers: ["DPoP-Nonce": "n1"])
        #expect(response.status == 201)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["dpop-nonce"] == "n1")
        #expect(text(response) == #"{"b":1,"a":["x",true]}"#)
    }

    @Test("an OAuth error is the RFC 6749 JSON object, not to be cached; repeated header names stay")
    func oauthError() throws {
        let response = HTTPResponse.oauthError("use_dpop_nonce", description: "nonce required", status: 401,
                                               headers: HTTPHeaders([(name: "WWW-Authenticate", value: #"DPoP error="use_dpop_nonce""#),
                                                                     (name: "WWW-Authenticate", value: "Bearer"),
                                                                     (name: "DPoP-Nonce", value: "abc")]))
        #expect(response.status == 401)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers.values(for: "www-authenticate") == [#"DPoP error="use_dpop_nonce""#, "Bearer"])
        #expect(try JSONValue.parse(response.body) == ["error": "use_dpop_nonce", "error_description": "nonce required"])
        #expect(text(HTTPResponse.oauthError("invalid_grant")) == #"{"error":"invalid_grant"}"#)
    }

    @Test("a caller's Content-Type replaces the helper's")
    func contentTypeOverride() {
        let response = HTTPResponse.json(["a": 1], headers: ["content-type": "application/vnd.custom+json"])
        #expect(response.headers.values(for: "Content-Type") == ["application/vnd.custom+json"])
    }

    @Test("jwt, form, text and redirect set their media type or Location")
    func others() throws {
        let jwt = HTTPResponse.jwt("a.b.c", contentType: "application/oauth-authz-req+jwt")
        #expect(jwt.headers["Content-Type"] == "application/oauth-authz-req+jwt")
        #expect(text(jwt) == "a.b.c")
        #expect(HTTPResponse.jwt("a.b.c").headers["Content-Type"] == "application/jwt")
        let form = HTTPResponse.form(["redirect_uri": "https://v.example/done?x=1"])
        #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(text(form) == "redirect_uri=https%3A%2F%2Fv.example%2Fdone%3Fx%3D1")
        let location = try #require(URL(string: "https://wallet.example/cb?code=abc&state=s"))
        let redirect = HTTPResponse.redirect(to: location)
        #expect(redirect.status == 302)
        #expect(redirect.headers["Location"] == "https://wallet.example/cb?code=abc&state=s")
        #expect(redirect.body.isEmpty)
        #expect(HTTPResponse.redirect(to: location, status: 303).status == 303)
        #expect(HTTPResponse.text("hi", status: 418).headers["Content-Type"] == "text/plain; charset=utf-8")
    }
}
