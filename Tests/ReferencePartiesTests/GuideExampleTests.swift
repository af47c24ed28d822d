import WalletEncoding
import Foundation
import JOSE
import ReferenceParties
import Testing
import WalletRuntime

/// The example of docs/reference-parties.md, run as written (plus its assertions).
@Suite("Reference parties guide")
struct GuideExampleTests {
    @Test("the guide's example serves a router in-process and over loopback", .timeLimit(.minutes(15)))
    func servingAHandler() async throws {
        var router = HTTPRouter()
        router.add(.get, "/hello/{name}") { _, parameters in
            .json(["greeting": .string("hello, " + (parameters["name"] ?? "nobody"))])
        }
        router.add(.post, "/token") { request, _ in
            let form = try request.formParameters()               // 400 invalid_request if not a strict form body
            guard try form.requiredValue("grant_type") == "client_credentials" else {
                return .oauthError("unsupported_grant_type")
            }
            return .json(["access_token": "abc", "token_type": "Bearer"], headers: ["Cache-Control": "no-store"])
        }

        // In-process, for tests:
        let inProcess = InProcessHTTPClient(handler: router)

        // Over HTTP, on a free port:
        let server = try LoopbackHTTPServer(handler: router)
        print("listening on \(server.baseURL)")                     // http://127.0.0.1:<port>
        let client = URLSessionHTTPClient(allowInsecureHTTP: true)  // http to loopback hosts only
        let response = try await client.send(HTTPRequest(url: server.baseURL.appendingPathComponent("hello/wallet"),
                                                         timeout: .seconds(600)))  // a hang guard: tests share a loaded machine
        server.stop()                                               // also on deinit

        #expect(try JSONValue.parse(response.body) == ["greeting": "hello, wallet"])
        let token = try await inProcess.send(HTTPRequest(
            method: .post, url: server.baseURL.appendingPathComponent("token"),
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(("grant_type=client_credentials").utf8)))
        #expect(try JSONValue.parse(token.body) == ["access_token": "abc", "token_type": "Bearer"])
        let refused = try await inProcess.send(HTTPRequest(
            method: .post, url: server.baseURL.appendingPathComponent("token"),
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("grant_type=password".utf8)))
        #expect(refused.status == 400)
        #expect(try JSONValue.parse(refused.body)["error"] == "unsupported_grant_type")
    }
}
