import CBOR
import Foundation
import JOSE
import Mdoc
import SDJWT
import WalletCrypto
import WalletEncoding

/// Where the verifier gets SD-JWT VC issuer keys.
public enum SDJWTIssuerTrust: Sendable {
    /// These keys; the issuer JWT's `kid` picks one when it names one, else each is tried.
    case keys([JWK])
    /// The leaf of the issuer JWT's `x5c`, after its chain validates to one of these anchors.
    case anchors([X509Certificate])
}

/// What one response is checked against: the request as sent, and how the presentations
/// must be bound (audience, nonce, mdoc session transcript).
struct ResponseContext: Sendable {
    let query: VerifierQuery
    /// The transaction data entries with the exact strings that were sent.
    let transactionData: [(entry: VerifierTransactionData, encoded: String)]
    let nonce: String
    /// The KB-JWT `aud`: the client identifier, or `origin:<origin>` over the DC API.
    let audience: String
    /// The mdoc SessionTranscript the device signature must cover.
    let sessionTranscript: SessionTranscript
}

/// The verifier's trust and tolerance settings for presentations.
struct PresentationPolicy: Sendable {
    let sdJwtIssuerTrust: SDJWTIssuerTrust
    let mdocIssuerAnchors: [X509Certificate]
    let clockSkew: TimeInterval
    let keyBindingMaximumAge: TimeInterval
    let mdocTransactionDataBinding: MdocTransactionDataBinding
}

/// Verifies a VP Token against a request (OpenID4VP 1.0 §8.6): each presentation with the
/// SDJWT and Mdoc modules plus the verifier's own checks (single-string `aud`, DCQL claims
/// and values, no extra disclosures, transaction data), then the DCQL credential rules.
/// It performs no I/O; `now` comes from the caller's clock.
struct VpTokenVerifier: Sendable {
    let context: ResponseContext
    let policy: PresentationPolicy
    let now: Date

    /// Verifies `vpToken` (the parsed `vp_token` object) and returns the presentations.
    func verify(_ vpToken: JSONValue) async throws(VerificationFailure) -> [VerifiedPresentation] {
        guard let entries = vpToken.objectValue else { throw .malformedResponse(.vpTokenNotAnObject) }
        var presentations: [VerifiedPresentation] = []
        var bound: [Int: Int] = [:]
        for (queryId, value) in entries {
            guard let credential = context.query.credential(queryId) else { throw .unknownQuery(queryId) }
            guard let items = value.arrayValue else { throw .malformedResponse(.vpTokenNotAnObject) }
            guard !items.isEmpty, items.count == 1 || credential.multiple else {
                throw .presentationCount(queryId: queryId, count: items.count)
            }
            for item in items {
                guard let text = item.stringValue else { throw .malformedPresentation(queryId: queryId) }
                let presentation: VerifiedPresentation
                switch credential.format {
                case .sdJwtVc: presentation = try verifySDJWT(text, for: credential)
                case .msoMdoc: presentation = try await verifyMdoc(text, for: credential)
                }
                for index in presentation.transactionData { bound[index, default: 0] += 1 }
                presentations.append(presentation)
            }
        }
        try checkCredentialSets(returned: Set(entries.keys))
        for index in context.transactionData.indices {
            switch bound[index] ?? 0 {
            case 0: throw .transactionData(.notBound(index: index))
            case 1: continue
            default: throw .transactionData(.boundMoreThanOnce(index: index))
            }
        }
        let order = context.query.credentials.map(\.id)
        return presentations.sorted { (order.firstIndex(of: $0.queryId) ?? 0) < (order.firstIndex(of: $1.queryId) ?? 0) }
    }

    /// §6.4.2: without `credential_sets` every query is required; with them, each required
    /// set needs one option whose queries were all answered.
    func checkCredentialSets(returned: Set<String>) throws(VerificationFailure) {
        guard let sets = context.query.credentialSets else {
            guard context.query.credentials.allSatisfy({ returned.contains($0.id) }) else { throw .queryNotSatisfied }
            return
        }
        for set in sets where set.required {
            guard set.options.contains(where: { option in option.allSatisfy(returned.contains) }) else {
                throw .queryNotSatisfied
            }
        }
    }

    /// The transaction data entries a presentation for `queryId` may bind, by request index.
    private func entries(for queryId: String) -> [(index: Int, entry: VerifierTransactionData, encoded: String)] {
        context.transactionData.enumerated().compactMap { index, item in
            item.entry.credentialIds.contains(queryId) ? (index, item.entry, item.encoded) : nil
        }
    }

    // MARK: SD-JWT VC

    func verifySDJWT(_ text: String, for credential: VerifierQuery.Credential) throws(VerificationFailure) -> VerifiedPresentation {
        let queryId = credential.id
        let sdJWT: SDJWT
        do { sdJWT = try SDJWT(compact: text) } catch { throw .sdJwt(queryId: queryId, error) }

        // Which entries the KB-JWT claims to bind (checked against its signature below,
        // where the SDJWT module compares the hashes with exactly these strings).
        let candidates = entries(for: queryId)
        var claimed: [Int] = []
        if let claims = sdJWT.keyBindingJWT?.claims, let hashes = claims["transaction_data_hashes"]?.arrayValue {
            let algorithm = claims["transaction_data_hashes_alg"]?.stringValue ?? "sha-256"
            guard let hash = try? SDJWTHashAlgorithm(name: algorithm) else {
                throw .transactionData(.hashAlgorithmNotAllowed(queryId: queryId, algorithm: algorithm))
            }
            for value in hashes {
                guard let digest = value.stringValue,
                      let match = candidates.first(where: { hash.base64URLDigest(of: $0.encoded) == digest }) else {
                    throw .transactionData(.unexpectedHash(queryId: queryId))
                }
                guard match.entry.allowedHashAlgorithms.contains(algorithm) else {
                    throw .transactionData(.hashAlgorithmNotAllowed(queryId: queryId, algorithm: algorithm))
                }
                claimed.append(match.index)
            }
        }
        let mustBind = credential.requireCryptographicHolderBinding
            || candidates.contains { $0.entry.credentialIds == [queryId] } || !claimed.isEmpty
        var expectation: KeyBindingExpectation?
        if mustBind || sdJWT.keyBindingJWT != nil {
            expectation = KeyBindingExpectation(
                audience: context.audience, nonce: context.nonce, maximumAge: policy.keyBindingMaximumAge,
                transactionData: claimed.map { context.transactionData[$0].encoded })
        }
        let verified = try verifyIssuerAndBinding(sdJWT, queryId: queryId, expectation: expectation)

        if let keyBinding = verified.keyBinding {
            // Our own check on top of the module's: `aud` is the one audience, as a string.
            guard keyBinding["aud"] == .string(context.audience) else {
                throw .audienceMismatch(queryId: queryId, expected: context.audience)
            }
        }
        let type = verified.type ?? ""
        guard credential.vctValues.contains(type) else { throw .credentialTypeNotRequested(queryId: queryId, type: type) }

        let processed: ProcessedPayload
        do { processed = try sdJWT.processed() } catch { throw .sdJwt(queryId: queryId, error) }
        let claimSet = try checkClaims(of: credential) { paths throws(VerificationFailure) in
            try Self.check(paths, in: processed, queryId: queryId)
        }
        var disclosed: [DisclosedClaim] = []
        for location in processed.locations {
            let path = ClaimPath(location)
            guard let value = Self.value(at: location, in: processed.claims) else { continue }
            disclosed.append(DisclosedClaim(path: path, value: value))
        }
        return VerifiedPresentation(
            queryId: queryId, format: .sdJwtVc, credentialType: type, disclosedClaims: disclosed, claimSet: claimSet,
            holderBound: verified.keyBinding != nil, transactionData: claimed,
            issuerCertificateSubjects: verified.certificateChain?.path.map(\.subject.description) ?? [],
            holderKey: verified.keyBinding == nil ? nil : try? verified.holderKey?.publicKey())
    }

    /// The SDJWT module's checks: issuer signature under the configured trust, disclosures,
    /// SD-JWT VC claims and validity, and the KB-JWT against `expectation` (which is set
    /// whenever binding is required or a KB-JWT is present, so an optional one is checked too).
    private func verifyIssuerAndBinding(_ sdJWT: SDJWT, queryId: String, expectation: KeyBindingExpectation?)
        throws(VerificationFailure) -> VerifiedSDJWT {
        func run(_ source: IssuerKeySource) throws(SDJWTError) -> VerifiedSDJWT {
            try SDJWTVerifier(options: SDJWTVerificationOptions(
                issuerKey: source, now: now, clockSkew: policy.clockSkew, profile: .sdJWTVC,
                keyBinding: expectation)).verify(sdJWT)
        }
        do throws(SDJWTError) {
            switch policy.sdJwtIssuerTrust {
            case .anchors(let anchors):
                return try run(.certificateChain(trustAnchors: anchors))
            case .keys(let keys):
                let kid = sdJWT.issuerSignedJWT.header.keyID
                var lastError = SDJWTError.invalidIssuerSignature(.invalidSignature)
                for key in keys where kid == nil || key.keyID == nil || key.keyID == kid {
                    do {
                        return try run(.jwk(key))
                    } catch .invalidIssuerSignature(let error) {
                        lastError = .invalidIssuerSignature(error)
                    }
                }
                throw lastError
            }
        } catch .keyBinding(.missing) {
            throw .missingKeyBinding(queryId: queryId)
        } catch {
            throw .sdJwt(queryId: queryId, error)
        }
    }

    /// Whether `paths` are all disclosed (values matching) and nothing else is; the result
    /// is the failure, if any.
    private static func check(_ claims: [VerifierQuery.Claim], in processed: ProcessedPayload,
                              queryId: String) throws(VerificationFailure) {
        for claim in claims {
            let locations: [[ClaimPathElement]]
            do { locations = try claim.path.locations(in: processed.claims) } catch {
                throw .missingClaim(queryId: queryId, path: claim.path)
            }
            if let values = claim.values {
                let matched = locations.contains { location in
                    value(at: location, in: processed.claims).map(values.contains) ?? false
                }
                guard matched else { throw .claimValueNotAllowed(queryId: queryId, path: claim.path) }
            }
        }
        let allowed: Set<Int>
        do { allowed = Set(try processed.disclosureIndices(for: claims.map(\.path))) } catch {
            throw .sdJwt(queryId: queryId, error)
        }
        for index in processed.locations.indices where !allowed.contains(index) {
            throw .extraClaimDisclosed(queryId: queryId, path: ClaimPath(processed.locations[index]))
        }
    }

    static func value(at location: [ClaimPathElement], in claims: JSONObject) -> JSONValue? {
        var current = JSONValue.object(claims)
        for element in location {
            switch (element, current) {
            case (.key(let key), .object(let members)):
                guard let next = members[key] else { return nil }
                current = next
            case (.index(let index), .array(let items)):
                guard index >= 0, index < items.count else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// Applies §6.4.1: the options are `claim_sets` (in order), or all `claims`, or none;
    /// the first option `check` accepts wins. Returns the option's claim ids with `claim_sets`.
    private func checkClaims(of credential: VerifierQuery.Credential,
                             _ check: ([VerifierQuery.Claim]) throws(VerificationFailure) -> Void)
        throws(VerificationFailure) -> [String]? {
        let claims = credential.claims ?? []
        guard let sets = credential.claimSets else {
            try check(claims)
            return nil
        }
        for option in sets {
            let selected = option.compactMap { id in claims.first { $0.id == id } }
            do {
                try check(selected)
                return option
            } catch {
                continue
            }
        }
        throw .noClaimSetSatisfied(queryId: credential.id)
    }

    // MARK: mdoc

    func verifyMdoc(_ text: String, for credential: VerifierQuery.Credential) async throws(VerificationFailure)
        -> VerifiedPresentation {
        let queryId = credential.id
        guard let bytes = Base64URL.decodeStrict(text) else { throw .malformedPresentation(queryId: queryId) }
        let response: DeviceResponse
        do { response = try DeviceResponse(encoded: bytes) } catch { throw .mdoc(queryId: queryId, error) }
        guard response.status == .ok, response.documents.count == 1, let document = response.documents.first else {
            throw .mdocResponseShape(queryId: queryId)
        }
        let verifier = DeviceResponseVerifier(trustAnchors: policy.mdocIssuerAnchors,
                                              sessionTranscript: context.sessionTranscript)
        let verified: VerifiedDocument
        do { verified = try await verifier.verify(document, at: now) } catch { throw .mdoc(queryId: queryId, error) }
        guard verified.docType == credential.docType else {
            throw .credentialTypeNotRequested(queryId: queryId, type: verified.docType)
        }
        var disclosed: [DisclosedClaim] = []
        var values: [ClaimPath: CBOR] = [:]
        for space in verified.issuerSigned {
            let nameSpace = space.nameSpace
            for element in space.elements {
                let identifier = element.identifier, value = element.value
                let path = ClaimPath([.key(nameSpace), .key(identifier)])
                values[path] = value
                disclosed.append(DisclosedClaim(path: path, value: value.jsonValue))
            }
        }
        let claimSet = try checkClaims(of: credential) { claims throws(VerificationFailure) in
            for claim in claims {
                guard let value = values[claim.path] else { throw .missingClaim(queryId: queryId, path: claim.path) }
                if let accepted = claim.values, !accepted.contains(value.jsonValue) {
                    throw .claimValueNotAllowed(queryId: queryId, path: claim.path)
                }
            }
            let requested = Set(claims.map(\.path))
            for claim in disclosed where !requested.contains(claim.path) {
                throw .extraClaimDisclosed(queryId: queryId, path: claim.path)
            }
        }
        // Transaction data: the device-signed element the binding rule names for each entry.
        var bound: [Int] = []
        for candidate in entries(for: queryId) {
            guard let expected = policy.mdocTransactionDataBinding.expectedElement(candidate.entry, candidate.encoded) else {
                continue
            }
            let element = verified.deviceSigned.first { $0.nameSpace == expected.nameSpace }?
                .elements.first { $0.identifier == expected.identifier }
            guard let element else { continue }
            guard element.value == expected.value else {
                throw .transactionData(.elementValueMismatch(queryId: queryId, index: candidate.index))
            }
            bound.append(candidate.index)
        }
        return VerifiedPresentation(
            queryId: queryId, format: .msoMdoc, credentialType: verified.docType, disclosedClaims: disclosed,
            claimSet: claimSet, holderBound: true, transactionData: bound,
            issuerCertificateSubjects: verified.issuerChain.path.map(\.subject.description),
            holderKey: try? verified.mobileSecurityObject.devicePublicKey())
    }
}

extension CBOR {
    /// The JSON form of an mdoc element value for `values` matching and display (RFC 8949
    /// §6.1 advice): text, integers, booleans and null as themselves, byte strings as
    /// base64url, dates as their text, maps with text keys as objects.
    var jsonValue: JSONValue {
        switch self {
        case .unsigned(let value): return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .number(Double(value))
        case .negative(let value): return value < UInt64(Int64.max) ? .integer(-1 - Int64(value)) : .number(-1 - Double(value))
        case .byteString(let bytes): return .string(Base64URL.encode(bytes))
        case .textString(let text): return .string(text)
        case .array(let items): return .array(items.map(\.jsonValue))
        case .map(let map):
            var object = JSONObject()
            for entry in map.entries {
                guard case .textString(let key) = entry.key else { continue }
                object[key] = entry.value.jsonValue
            }
            return .object(object)
        case .tagged(_, let inner): return inner.jsonValue
        case .boolean(let value): return .bool(value)
        case .null, .undefined, .simple: return .null
        case .half: return .null
        case .float(let value): return .number(Double(value))
        case .double(let value): return .number(value)
        }
    }
}
