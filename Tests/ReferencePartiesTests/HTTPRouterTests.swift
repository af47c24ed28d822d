import WalletEncoding
import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletRuntime

@Suite("HTTPRouter")
struct HTTPRouterTests {
    private func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.add(.get, "/") { _, _ in .text("root") }
        router.add(.get, "/offers/{id}") { _, parameters in .text("offer \(parameters["id"] ?? "?")") }
        router.add(.post, "/offers/{id}") { _, parameters in .text("post \(parameters["id"] ?? "?")") }
        router.add(.get, "/offers/special") { _, _ in .text("never: the pattern above wins") }
        router.add(.get, "/.well-known/openid-credential-issuer") { _, _ in .json(["credential_issuer": "x"]) }
        router.add(.get, "/a/{x}/b/{y}") { _, parameters in .text("\(parameters["x"] ?? "?")|\(parameters["y"] ?? "?")") }
        router.add(.put, "/token") { _, _ in .text("put") }
        router.add(.post, "/token") { request, _ in
            let form = try request.formParameters()
            return .json(["grant_type": .string(try form.requiredValue("grant_type"))])
        }
        router.add(.post, "/drop") { _, _ in throw HTTPHandlerError.dropConnection }
        return router
    }

    @Test("a route answers its method and path, with its path parameters percent-decoded")
    func matchesMethodAndPath() async throws {
        let router = router()
        #expect(text(try await router.respond(to: request(.get, "/"))) == "root")
        #expect(text(try await router.respond(to: request(.get, "/offers/42"))) == "offer 42")
        #expect(text(try await router.respond(to: request(.post, "/offers/42"))) == "post 42")
        #expect(text(try await router.respond(to: request(.get, "/offers/a%20b%2Fc"))) == "offer a b/c")
        #expect(text(try await router.respond(to: request(.get, "/a/1/b/2?q=1"))) == "1|2")
    }

    @Test("the first route that matches wins")
    func firstMatchWins() async throws {
        #expect(text(try await router().respond(to: request(.get, "/offers/special"))) == "offer special")
    }

    @Test("literal segments are compared after percent-decoding")
    func decodedLiterals() async throws {
        let response = try await router().respond(to: request(.get, "/.well-known/openid%2Dcredential-issuer"))
        #expect(response.status == 200)
        #expect(text(response) == #"{"credential_issuer":"x"}"#)
    }

    @Test("an unknown path answers 404")
    func unknownPath() async throws {
        let router = router()
        for path in ["/nothing", "/offers", "/offers/", "/offers/1/2", "/a/1/b", "//", "/token/"] {
            #expect(try await router.respond(to: request(.get, path)).status == 404, "path \(path)")
        }
    }

    @Test("a known path with another method answers 405 and lists the methods it has")
    func wrongMethod() async throws {
        let router = router()
        let response = try await router.respond(to: request(.delete, "/offers/1"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, POST")
        let token = try await router.respond(to: request(.get, "/token"))
        #expect(token.status == 405)
        #expect(token.headers["allow"] == "PUT, POST")
    }

    @Test("a path whose escapes do not decode to UTF-8 answers 400")
    func malformedPath() async throws {
        let response = try await router().respond(to: request(.get, "/offers/%C3"))
        #expect(response.status == 400)
        #expect(try JSONValue.parse(response.body)["error"] == "invalid_request")
    }

    @Test("an early exit thrown by a parsing helper becomes the response; any other error is a 500 server_error")
    func earlyExit() async throws {
        let router = router()
        let missing = try await router.respond(to: request(
            .post, "/token", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("code=1".utf8)))
        #expect(missing.status == 400)
        #expect(try JSONValue.parse(missing.body) == ["error": "invalid_request", "error_description": "missing parameter grant_type"])
        let ok = try await router.respond(to: request(
            .post, "/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array("grant_type=authorization_code".utf8)))
        #expect(ok.status == 200)
        #expect(text(ok) == #"{"grant_type":"authorization_code"}"#)

        var failing = HTTPRouter()
        failing.add(.get, "/") { _, _ in throw CancellationError() }
        let failure = try await failing.respond(to: request(.get, "/"))
        #expect(failure.status == 500)
        #expect(text(failure) == #"{"error":"server_error"}"#)
    }

    @Test("a route that drops the connection passes the drop on to the transport")
    func dropPropagates() async {
        await #expect(throws: HTTPHandlerError.dropConnection) {
            _ = try await router().respond(to: request(.post, "/drop"))
        }
    }

    @Test("an empty router answers 404 to everything")
    func emptyRouter() async throws {
        #expect(try await HTTPRouter().respond(to: request(.get, "/")).status == 404)
    }
}
