import Foundation
import JOSE
import Mdoc
import OpenID4VP
import SDJWT
import WalletCrypto
import WalletEncoding
import WalletRuntime
import WalletStorage

/// The `presentation` case: an OpenID4VP 1.0 remote presentation, step by step and
/// whole. Resolving a signed request (x509_san_dns, chain to a reader anchor), matching
/// its DCQL query over stores of 1,000 and 10,000 credentials, building the SD-JWT VC
/// presentation and encrypting the direct_post.jwt response; each step against the bare
/// crypto it cannot avoid, timed in the same run; and a whole session in-process.
enum PresentationBenchmark {
    static let pid = "urn:eudi:pid:1"

    static func run(iterations: Int, python: String?) throws -> [BenchRow] {
        _ = python
        let box = LockedBox<Result<[BenchRow], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let rows = try await measure(iterations: iterations)
                box.withLock { $0 = .success(rows) }
            } catch {
                box.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let outcome = box.withLock({ $0 }) else { throw BenchmarkFailure() }
        return try outcome.get()
    }

    /// A verifier that answers every POST with 200 and no redirect.
    struct AcceptingVerifier: HTTPClient {
        func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        }
    }

    private static func line(_ name: String, _ seconds: Double, _ floor: Double, _ what: String) {
        detail("  " + name.padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: "%9.1f µs   %6.2fx %@", seconds * 1e6, seconds / floor, what))
    }

    private static func measure(iterations: Int) async throws -> [BenchRow] {
        let now = Date()
        // The reader PKI and the signed request.
        let rootKey = try ECPrivateKey.generate(curve: .p256), leafKey = try ECPrivateKey.generate(curve: .p256)
        let root = try CertificateBuilder.certificateAuthority(
            subject: try DistinguishedName([(.commonName, "Bench Reader Root")]),
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)).selfSigned(with: .ec(rootKey))
        let leaf = try CertificateBuilder.endEntity(
            subject: try DistinguishedName([(.commonName, "Bench Verifier")]), subjectPublicKeyInfoDER: leafKey.publicKey.spkiDER,
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400),
            subjectAlternativeNames: [.dnsName("verifier.example")]).signed(by: root, key: .ec(rootKey))
        let encryptionKey = try ECPrivateKey.generate(curve: .p256)
        let encryptionJWK = try JWK(publicKey: encryptionKey.publicKey).adding(["kid": "enc", "alg": "ECDH-ES"])
        let clientId = "x509_san_dns:verifier.example"
        let payload: JSONObject = [
            "client_id": .string(clientId), "response_type": "vp_token", "response_mode": "direct_post.jwt",
            "response_uri": "https://verifier.example/post", "nonce": "bench-nonce-0123456789", "state": "bench-state",
            "aud": "https://self-issued.me/v2", "iat": .integer(Int64(now.timeIntervalSince1970)),
            "client_metadata": ["jwks": ["keys": [encryptionJWK.jsonValue]]],
            "dcql_query": ["credentials": [[
                "id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": [.string(pid)]],
                "claims": [["path": ["given_name"]], ["path": ["family_name"]], ["path": ["address", "locality"]]],
            ]]],
        ]
        let object = try await JWS.sign(payload: JSONValue.object(payload).serializedBytes, signer: SoftwareSigner(leafKey),
                                        type: "oauth-authz-req+jwt", x5c: [leaf]).compactSerialization
        let uri = "openid4vp://?" + FormURLEncoding.encode([("client_id", clientId), ("request", object)])
        let config = PresentationConfig(readerAnchorsDer: [root.derEncoded])

        // The credential: an SD-JWT VC of 20 claims, every one selectively disclosable.
        let area = try SoftwareSecureArea(location: .inMemory, wrapping: try EphemeralWrappingProvider())
        let holder = try await area.createKey(alias: "holder")
        var claims: JSONObject = ["vct": .string(pid), "iss": "https://issuer.example", "given_name": "Erika",
                                  "family_name": "Mustermann", "address": ["locality": "Köln", "street_address": "Heidestraße 17"]]
        var paths: [ClaimPath] = [["given_name"], ["family_name"], ["address"], ["address", "locality"], ["address", "street_address"]]
        for index in 0..<16 {
            claims["claim_\(index)"] = .string("value \(index)")
            paths.append([.key("claim_\(index)")])
        }
        let issued = try await SDJWTIssuer(signer: SoftwareSigner(try ECPrivateKey.generate(curve: .p256))).issue(
            claims: claims, plan: try DisclosurePlan(selectivelyDisclosable: paths), holderKey: JWK(publicKey: holder.publicKey))
        let raw = Array(issued.serialization.utf8)

        detail("presentation: OpenID4VP 1.0, signed request (x509_san_dns, 2-certificate chain), DCQL for 3 of 21 claims,")
        detail("  SD-JWT VC + KB-JWT, direct_post.jwt (ECDH-ES P-256, A128GCM); \(iterations) iterations, median per run")

        // 1. Resolve: parse the invocation, verify chain and signature, check the parameters.
        let resolve = await asyncMedianSeconds(iterations: iterations) {
            var flow = PresentationFlow(invocation: .uri(uri), config: config, walletNonce: nil)
            let effects = flow.handle(.start(now: now))
            guard case .loadCredentials? = effects.first else { print("presentation: the request did not resolve: \(flow.state)"); exit(1) }
            blackHole(effects)
        }
        let message = Array(object.utf8.prefix(700))
        let signature = try leafKey.signature(for: message)
        let bareVerify = medianSeconds(iterations: iterations) {
            blackHole(leafKey.publicKey.isValidSignature(signature, for: message))
        }
        line("resolve the signed request", resolve, 2 * bareVerify, "2 ES256 verifies (certificate, request object)")

        // 2. Match over stores of growing size: the store's list filters on the DCQL
        // query's type (one scan of the small credentials rows), so only the credentials
        // of that type are read and parsed.
        // Their floor: reading a credential's claims means hashing each of its disclosures.
        let disclosures = issued.disclosures.map { Array($0.encoded.utf8) }
        let digestFloor = medianSeconds(iterations: iterations) {
            for disclosure in disclosures { blackHole(HashAlgorithm.sha256.digest(disclosure)) }
        }
        var rows: [BenchRow] = [BenchRow(suite: "presentation", name: "resolve the signed request", sdkSeconds: resolve,
                                         floorSeconds: 2 * bareVerify, floorName: "2 ES256 verifies")]
        var matchTimes: [Int: Double] = [:]
        for (count, matching) in [(1_000, 10), (10_000, 10), (1_000, 1_000)] {
            let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
            for number in 0..<count {
                let isPid = number < matching
                try await store.save(StoredCredential(
                    id: "credential-\(number)", format: .sdJwtVc, type: isPid ? pid : "urn:other:type:\(number % 50)",
                    issuer: IssuerInfo(identifier: "https://issuer.example"),
                    instances: [CredentialInstance(index: 0, keyAlias: "key-\(number)", raw: raw)]))
            }
            let query = try DcqlQuery(json: payload["dcql_query"]?.objectValue ?? [:])
            let seconds = try await asyncMedianSeconds(iterations: max(5, iterations / 10)) {
                var credentials: [DcqlCredential] = []
                for filter in [CredentialFilter(format: .sdJwtVc, type: pid)] {
                    for stored in try await store.list(filter) {
                        if let credential = try DcqlCredential(stored: stored) { credentials.append(credential) }
                    }
                }
                let match = DcqlMatcher.match(query, against: credentials)
                guard match.candidates["pid"]?.count == matching else { print("presentation: the query matched wrongly"); exit(1) }
                blackHole(match)
            }
            matchTimes[count * 100_000 + matching] = seconds
            rows.append(BenchRow(suite: "presentation", name: "DCQL match, \(count) stored (\(matching) of the type)", sdkSeconds: seconds,
                                 floorSeconds: digestFloor * Double(matching), floorName: "SHA-256 of the disclosures"))
            line("match over \(count) stored (\(matching) of the type)", seconds, digestFloor * Double(matching),
                 "SHA-256 of the \(disclosures.count) disclosures of each credential of the type")
        }
        if let small = matchTimes[1_000 * 100_000 + 10], let large = matchTimes[10_000 * 100_000 + 10] {
            detail(String(format: "  growth 1,000 -> 10,000 stored (10 of the type): %.2fx", large / small))
        }

        // 3. Build and encrypt the response.
        let job = PresentationJob(queryId: "pid", credentialId: "credential-0", format: "dc+sd-jwt",
                                  disclosedPaths: [["given_name"], ["family_name"], ["address", "locality"]], holderBound: true)
        let context = PresentationContext(
            audience: clientId, nonce: "bench-nonce-0123456789", issuedAt: now,
            sessionTranscript: .openID4VP(.openID4VP(clientId: clientId, nonce: "n", jwkThumbprint: nil, responseUri: "")))
        let signer = try await area.signer(for: "holder")
        let build = try await asyncMedianSeconds(iterations: iterations) {
            let presentation = try await PresentationBuilder.sdJwt(job, raw: raw, signer: signer, context: context)
            let body = JSONValue.object(["vp_token": ["pid": [.string(presentation)]], "state": "bench-state"]).serializedBytes
            blackHole(try JWE.encrypt(body, to: encryptionJWK, contentEncryption: .a128gcm))
        }
        let sign = try medianSeconds(iterations: iterations) { blackHole(try leafKey.signature(for: message)) }
        let agreement = try medianSeconds(iterations: iterations) {
            let ephemeral = try ECPrivateKey.generate(curve: .p256)
            blackHole(try ephemeral.sharedSecret(with: encryptionKey.publicKey))
        }
        line("build + encrypt the response", build, sign + agreement, "ES256 sign + P-256 keygen + ECDH")
        rows.append(BenchRow(suite: "presentation", name: "build + encrypt the response", sdkSeconds: build,
                             floorSeconds: sign + agreement, floorName: "sign, keygen, ECDH"))

        // 4. A whole session in-process: resolve, match (1,000 stored), respond, deliver.
        let store = try CredentialStore(location: .inMemory, secureArea: area, wrapping: try EphemeralWrappingProvider())
        for number in 0..<1_000 {
            try await store.save(StoredCredential(
                id: "credential-\(number)", format: .sdJwtVc, type: number < 10 ? pid : "urn:other:type:\(number % 50)",
                issuer: IssuerInfo(identifier: "https://issuer.example"),
                // The first credential of the type is the one presented: it has the real key.
                instances: [CredentialInstance(index: 0, keyAlias: number == 0 ? "holder" : "key-\(number)", raw: raw)]))
        }
        let client = Openid4VpClient(store: store, config: config, httpClient: AcceptingVerifier())
        var toConsent: [Double] = []
        let sessions = max(10, iterations / 4)
        let cpuStart = processCPUSeconds()
        let session = await asyncMedianSeconds(iterations: sessions) {
            let start = monotonicNanoseconds()
            let running = client.start(uri)
            for await state in running.states {
                if case .requestResolved(let request) = state {
                    toConsent.append(secondsSince(start))
                    running.respond(.auto(request))
                }
                if state.isTerminal {
                    guard case .completed = state else { print("presentation: the session failed: \(state)"); exit(1) }
                    break
                }
            }
        }
        let cpuPerSession = (processCPUSeconds() - cpuStart) / Double(sessions)
        toConsent.sort()
        let resolved = toConsent[toConsent.count / 2]
        let floor = 2 * bareVerify + sign + agreement
        line("whole session (1,000 stored)", session, floor, "its crypto floor (2 verifies, 1 sign, keygen + ECDH)")
        line("  of which start to requestResolved", resolved, 2 * bareVerify, "2 ES256 verifies")
        line("  of which respond to completed", session - resolved, sign + agreement, "ES256 sign + P-256 keygen + ECDH")
        // Wall time on a shared machine includes waiting for a core at every task hop;
        // the process's CPU time per session is the work itself.
        line("whole session, CPU time (all threads)", cpuPerSession, floor, "its crypto floor")
        rows.append(BenchRow(suite: "presentation", name: "whole session (1,000 stored), wall", sdkSeconds: session,
                             floorSeconds: floor, floorName: "2 verifies, sign, keygen, ECDH"))
        rows.append(BenchRow(suite: "presentation", name: "whole session (1,000 stored), CPU", sdkSeconds: cpuPerSession,
                             floorSeconds: floor, floorName: "2 verifies, sign, keygen, ECDH"))
        return rows
    }
}
