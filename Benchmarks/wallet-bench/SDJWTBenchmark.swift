import Foundation
import JOSE
import SDJWT
import WalletCrypto
import WalletEncoding

/// The `sdjwt` case: a holder building a presentation of 10 disclosures with a KB-JWT,
/// and a verifier checking it (issuer signature, disclosures, KB-JWT), each against the
/// bare ES256 operation it cannot avoid, timed in the same run.
enum SDJWTBenchmark {
    static func run(iterations: Int, python: String?) throws -> [BenchRow] {
        let issuerKey = try ECPrivateKey.generate(curve: .p256)
        let holderKey = try ECPrivateKey.generate(curve: .p256)
        let holderSigner = SoftwareSigner(holderKey)
        let now = Date()
        var claims: JSONObject = [
            "vct": "urn:eudi:pid:1", "iss": "https://issuer.example",
            "iat": .integer(Int64(now.timeIntervalSince1970) - 60), "exp": .integer(Int64(now.timeIntervalSince1970) + 86_400),
        ]
        var paths: [ClaimPath] = []
        for index in 0..<20 {
            claims["claim_\(index)"] = .string("value number \(index) of a PID-like credential")
            if index < 10 { paths.append([.key("claim_\(index)")]) }
        }
        let claimSet = claims, presented = paths
        let plan = try DisclosurePlan(selectivelyDisclosable: (0..<20).map { [.key("claim_\($0)")] }, decoysPerObject: 5)
        let issued = try blocking {
            try await SDJWTIssuer(signer: SoftwareSigner(issuerKey)).issue(
                claims: claimSet, plan: plan, holderKey: JWK(publicKey: holderKey.publicKey))
        }
        let parameters = KeyBindingParameters(audience: "https://verifier.example", nonce: "bench-nonce", issuedAt: now)
        let presentation = try blocking { try await issued.presentation(disclosing: presented, keyBinding: parameters, signer: holderSigner) }
        guard presentation.disclosures.count == 10 else { print("sdjwt: expected 10 disclosures"); exit(1) }
        let text = presentation.serialization
        let verifier = SDJWTVerifier(options: SDJWTVerificationOptions(
            issuerKey: .jwk(JWK(publicKey: issuerKey.publicKey)), now: now,
            keyBinding: KeyBindingExpectation(audience: "https://verifier.example", nonce: "bench-nonce")))
        _ = try verifier.verify(text)

        detail("sdjwt: credential with 20 disclosures + 5 decoys, presenting 10 with a KB-JWT; \(iterations) iterations, median per run")
        // Each measurement in the same rounds as its floor (see `interleavedMedians`).
        // The same presentation is also built from a credential parsed afresh each time
        // (a wallet that reads it from the store for one presentation; `present` reuses
        // one value, which keeps its processed payload, as matching then presenting does).
        let issuedText = issued.serialization
        let message = Array(text.utf8.prefix(600))
        let presenting = try blocking {
            try await asyncInterleavedMedians(iterations: iterations, [
                { blackHole(try await issued.presentation(disclosing: presented, keyBinding: parameters, signer: holderSigner)) },
                {
                    blackHole(try await SDJWT(compact: issuedText).presentation(disclosing: presented, keyBinding: parameters,
                                                                                 signer: holderSigner))
                },
                { blackHole(try holderKey.signature(for: message)) },
            ])
        }
        let (present, presentFresh, sign) = (presenting[0], presenting[1], presenting[2])
        let signature = try holderKey.signature(for: message)
        let verifying = try interleavedMedians(iterations: iterations, [
            { blackHole(try verifier.verify(text)) },
            { blackHole(holderKey.publicKey.isValidSignature(signature, for: message)) },
        ])
        let (verify, bareVerify) = (verifying[0], verifying[1])
        // Where a presentation's time goes, step by step (each its own median).
        let unbound = try issued.presentation(disclosing: presented)
        let steps: [(String, Double)] = [
            // A fresh value each time: a value keeps its processed payload after the first call.
            ("  step: parse + process payload + digests", try medianSeconds(iterations: iterations) {
                blackHole(try SDJWT(compact: issuedText).processed()) }),
            ("  step: select 10 disclosures", try medianSeconds(iterations: iterations) {
                blackHole(try issued.presentation(disclosing: presented)) }),
            ("  step: sd_hash", medianSeconds(iterations: iterations) { blackHole(unbound.sdHash) }),
            ("  step: bind (KB-JWT)", try blocking {
                try await asyncMedianSeconds(iterations: iterations) {
                    blackHole(try await unbound.bound(with: parameters, signer: holderSigner)) } }),
            ("  step: parse presentation", try medianSeconds(iterations: iterations) { blackHole(try SDJWT(compact: text)) }),
        ]
        func line(_ name: String, _ seconds: Double, _ floor: Double, _ what: String) {
            detail("  " + name.padding(toLength: 40, withPad: " ", startingAt: 0)
                  + String(format: "%8.1f µs   %5.2fx %@", seconds * 1e6, seconds / floor, what))
        }
        line("present (select 10 + KB-JWT)", present, sign, "the bare ES256 sign (1 signature needed)")
        line("present, credential parsed afresh", presentFresh, sign, "the bare ES256 sign")
        line("verify (issuer sig, 10 digests, KB-JWT)", verify, bareVerify, "the bare ES256 verify (2 verifications needed)")
        line("ES256 sign (OpenSSL)", sign, sign, "the floor")
        line("ES256 verify (OpenSSL)", bareVerify, bareVerify, "the floor")
        for (name, seconds) in steps { line(name, seconds, sign, "the bare ES256 sign") }
        var peer: (present: Double, verify: Double)?
        if let python {
            peer = comparePython(python, issuance: issued.serialization, presentation: text, issuerKey: issuerKey,
                          holderKey: holderKey, iterations: iterations, sdkPresent: present, sdkVerify: verify)
        }
        return [
            BenchRow(suite: "sdjwt", name: "present 10 of 20 + KB-JWT", sdkSeconds: present, floorSeconds: sign,
                     floorName: "1 ES256 sign", targetRatio: 2.0,
                     peerName: peer.map { _ in "sd-jwt present" }, peerSeconds: peer?.present, peerTargetSpeedup: 4),
            // The issue's floor for a verification: two ES256 verifies (issuer signature, KB-JWT).
            BenchRow(suite: "sdjwt", name: "verify: issuer sig + digests + KB-JWT", sdkSeconds: verify, floorSeconds: 2 * bareVerify,
                     floorName: "2 ES256 verifies", targetRatio: 1.5,
                     peerName: peer.map { _ in "sd-jwt verify" }, peerSeconds: peer?.verify, peerTargetSpeedup: 4),
        ]
    }

    /// The sd-jwt reference implementation (Python) presenting and verifying the same credential.
    private static func comparePython(_ python: String, issuance: String, presentation: String, issuerKey: ECPrivateKey,
                                      holderKey: ECPrivateKey, iterations: Int, sdkPresent: Double,
                                      sdkVerify: Double) -> (present: Double, verify: Double)? {
        let issuerJWK = JWK(publicKey: issuerKey.publicKey).jsonString
        guard let holderJWK = try? JWK(privateKey: holderKey).jsonString
        else { return nil }
        let script = """
        import sys, time, statistics, json
        from jwcrypto.jwk import JWK
        from sd_jwt.holder import SDJWTHolder
        from sd_jwt.verifier import SDJWTVerifier
        issuance, presentation, issuer, holder, n = sys.argv[1], sys.argv[2], JWK.from_json(sys.argv[3]), JWK.from_json(sys.argv[4]), int(sys.argv[5])
        def median(f):
            samples = []
            for _ in range(n):
                t = time.perf_counter(); f(); samples.append(time.perf_counter() - t)
            return statistics.median(samples)
        disclose = {f"claim_{i}": True for i in range(10)}
        def present():
            SDJWTHolder(issuance).create_presentation(disclose, "bench-nonce", "https://verifier.example", holder)
        def verify():
            SDJWTVerifier(presentation, lambda iss, h: issuer, "https://verifier.example", "bench-nonce").get_verified_payload()
        print(median(present), median(verify))
        """
        guard let numbers = PythonPeer.run(python, script: script, arguments: [issuance, presentation, issuerJWK, holderJWK, String(iterations)],
                                           expecting: 2) else {
            detail("  sd-jwt: \(python) has no working sd-jwt package")
            return nil
        }
        detail(String(format: "  sd-jwt (Python) present %8.1f µs   SDK is %.1fx faster", numbers[0] * 1e6, numbers[0] / sdkPresent))
        detail(String(format: "  sd-jwt (Python) verify  %8.1f µs   SDK is %.1fx faster", numbers[1] * 1e6, numbers[1] / sdkVerify))
        return (numbers[0], numbers[1])
    }
}
