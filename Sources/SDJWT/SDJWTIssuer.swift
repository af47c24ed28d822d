import JOSE
import WalletCrypto
import WalletRuntime
import WalletEncoding

/// Mints SD-JWTs (RFC 9901 §4) and SD-JWT VCs: applies a `DisclosurePlan` to a claims
/// object, binds the result to a holder key through `cnf.jwk`, and signs through `Signer`.
public struct SDJWTIssuer: Sendable {
    /// The issuer's signing key (software or secure area).
    public let signer: any Signer
    /// The `_sd_alg` hash.
    public let hashAlgorithm: SDJWTHashAlgorithm
    /// The header `typ` (`dc+sd-jwt` for SD-JWT VC).
    public let type: String
    /// The header `kid`, if any.
    public let keyID: String?
    /// The header `x5c` (leaf first), if any.
    public let certificateChain: [X509Certificate]?
    /// Salts and decoys come from here.
    public let random: any RandomSource

    /// Bytes of randomness per salt (RFC 9901 §9.3 recommends at least 128 bits).
    static let saltByteCount = 16

    /// An issuer signing with `signer`.
    public init(signer: any Signer, hashAlgorithm: SDJWTHashAlgorithm = .sha256, type: String = "dc+sd-jwt",
                keyID: String? = nil, certificateChain: [X509Certificate]? = nil, random: any RandomSource = SystemRandom()) {
        self.signer = signer
        self.hashAlgorithm = hashAlgorithm
        self.type = type
        self.keyID = keyID
        self.certificateChain = certificateChain
        self.random = random
    }

    /// Mints an SD-JWT from `claims` following `plan`, bound to `holderKey` (its public
    /// part goes into `cnf.jwk`). The result carries every disclosure, as issued. For an
    /// SD-JWT VC `typ`, `vct` must be present and `iss`, `nbf`, `exp`, `cnf`, `vct`,
    /// `status` stay visible.
    public func issue(claims: JSONObject, plan: DisclosurePlan, holderKey: JWK?) async throws(SDJWTError) -> SDJWT {
        let isVC = type == "dc+sd-jwt" || type == "vc+sd-jwt"
        if isVC {
            guard claims["vct"]?.stringValue != nil else { throw .missingClaim("vct") }
            for name in SDJWTVerifier.alwaysVisibleClaims where plan.members[name]?.isSelectivelyDisclosable == true {
                throw .invalidPlan(.mustStayVisible(name))
            }
        }
        for name in ["_sd", "_sd_alg", "cnf"] where claims[name] != nil && !(name == "cnf" && holderKey == nil) {
            throw .invalidPlan(.reservedForIssuer(name))
        }
        var disclosures: [Disclosure] = []
        guard case .object(var payload) = try apply(plan, to: .object(claims), at: "$", disclosures: &disclosures) else {
            throw .invalidPlan(.topLevelDisclosable)
        }
        if plan.isSelectivelyDisclosable { throw .invalidPlan(.topLevelDisclosable) }
        payload["_sd_alg"] = .string(hashAlgorithm.rawValue)
        if let holderKey {
            do {
                payload["cnf"] = .object(["jwk": try holderKey.publicJWK.jsonValue])
            } catch {
                throw .keyBinding(.invalidHolderKey(error))
            }
        }
        let jwt: JWT
        do {
            jwt = try await JWT.sign(claims: try JWTClaims(payload), signer: signer, type: type, keyID: keyID,
                                     x5c: certificateChain)
        } catch .keyOperation(let failure) {
            throw .keyOperation(failure)
        } catch {
            throw .signingFailed(error)
        }
        return try SDJWT(issuerSignedJWT: jwt.compactSerialization, disclosures: disclosures)
    }

    private func salt() throws(SDJWTError) -> String {
        do {
            return Base64URL.encode(try random.bytes(count: Self.saltByteCount))
        } catch {
            throw .randomSourceFailed(error)
        }
    }

    /// A decoy digest: the hash of a fresh random value, like a real digest (RFC 9901 §4.2.5).
    private func decoy() throws(SDJWTError) -> String { hashAlgorithm.base64URLDigest(of: try salt()) }

    /// A random index in `0...upper` from the random source.
    private func randomIndex(upTo upper: Int) throws(SDJWTError) -> Int {
        guard upper > 0 else { return 0 }
        let bytes: [UInt8]
        do {
            bytes = try random.bytes(count: 4)
        } catch {
            throw .randomSourceFailed(error)
        }
        let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Int(value % UInt32(upper + 1))
    }

    /// Applies the inner plan (members, elements, decoys) to `value`; the node's own
    /// disclosability is handled by the caller.
    private func apply(_ plan: DisclosurePlan, to value: JSONValue, at location: String,
                       disclosures: inout [Disclosure]) throws(SDJWTError) -> JSONValue {
        switch value {
        case .object(let members):
            for name in plan.members.keys where members[name] == nil {
                throw .invalidPlan(.noSuchClaim(name, location: location))
            }
            guard plan.elements.isEmpty, plan.everyElement == nil else { throw .invalidPlan(.notAnArray(location: location)) }
            var output: JSONObject = [:]
            var digests: [String] = []
            for (name, member) in members {
                guard name != "_sd", name != "..." else { throw .disclosure(.reservedClaimName(name)) }
                let memberPlan = plan.members[name] ?? DisclosurePlan()
                let inner = try apply(memberPlan, to: member, at: location + "." + name, disclosures: &disclosures)
                if memberPlan.isSelectivelyDisclosable {
                    let disclosure = try Disclosure(salt: try salt(), claimName: name, value: inner)
                    disclosures.append(disclosure)
                    digests.append(disclosure.digest(using: hashAlgorithm))
                } else {
                    output[name] = inner
                }
            }
            for _ in 0..<max(0, plan.decoyCount) { digests.append(try decoy()) }
            // RFC 9901 §4.2.4.1: sorted, so the order reveals nothing about the claims.
            if !digests.isEmpty { output["_sd"] = .array(digests.sorted().map { .string($0) }) }
            return .object(output)
        case .array(let elements):
            guard plan.members.isEmpty else { throw .invalidPlan(.notAnObject(location: location)) }
            for index in plan.elements.keys where index < 0 || index >= elements.count {
                throw .invalidPlan(.noSuchElement(index, location: location))
            }
            var output: [JSONValue] = []
            for (index, element) in elements.enumerated() {
                let elementPlan = plan.elements[index] ?? plan.everyElement ?? DisclosurePlan()
                let inner = try apply(elementPlan, to: element, at: location + "[\(index)]", disclosures: &disclosures)
                if elementPlan.isSelectivelyDisclosable {
                    let disclosure = try Disclosure(salt: try salt(), claimName: nil, value: inner)
                    disclosures.append(disclosure)
                    output.append(.object(["...": .string(disclosure.digest(using: hashAlgorithm))]))
                } else {
                    output.append(inner)
                }
            }
            for _ in 0..<max(0, plan.elementDecoyCount) {
                output.insert(.object(["...": .string(try decoy())]), at: try randomIndex(upTo: output.count))
            }
            return .array(output)
        default:
            guard plan.members.isEmpty, plan.elements.isEmpty, plan.everyElement == nil else {
                throw .invalidPlan(.notAContainer(location: location))
            }
            return value
        }
    }
}
