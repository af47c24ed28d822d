#!/usr/bin/env python3
"""Cross-checks the SDK's SD-JWT VC with the IETF/OWF reference implementation (PyPI `sd-jwt`,
module `sd_jwt`), in both directions:

1. reference issuer -> SDK verifies, presents with a KB-JWT -> reference verifier accepts;
2. SDK issuer -> reference holder presents -> reference verifier accepts (and the SDK too).

Keys are exchanged as JWK JSON. The SDK is driven through `$WALLET_BIN interop sdjwt ...`
(Sources/wallet/Interop/SDJWTInteropCommand.swift).
"""
import json
import time

from jwcrypto.jwk import JWK
from sd_jwt.common import SDObj
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer
from sd_jwt.verifier import SDJWTVerifier

from interop_common import Checks, run_wallet

checks = Checks("sdjwt/sd-jwt reference")
AUD = "https://verifier.example.org"
NONCE = "nonce-4711"

issuer_key = JWK.generate(kty="EC", crv="P-256")
holder_key = JWK.generate(kty="EC", crv="P-256")
issuer_private = issuer_key.export_private()
issuer_public = issuer_key.export_public()
holder_private = holder_key.export_private()
holder_public = holder_key.export_public()


def sdk(*args):
    return run_wallet("interop", "sdjwt", *args)


def reference_verify(presentation, aud=None, nonce=None):
    """The reference verifier's processed claims, or the exception it raised."""
    try:
        verifier = SDJWTVerifier(presentation, lambda iss, header: issuer_key, aud, nonce)
        return verifier.get_verified_payload()
    except Exception as error:  # the reference raises plain exceptions
        return error


now = int(time.time())
visible = {"vct": "urn:eudi:pid:1", "iss": "https://issuer.example", "iat": now - 60, "exp": now + 86400}

# 1. Reference-minted SD-JWT VC -> SDK.
user_claims = dict(visible)
user_claims.update({
    SDObj("given_name"): "Erika",
    SDObj("family_name"): "Mustermann",
    SDObj("address"): {SDObj("street_address"): "Heidestraße 17", SDObj("locality"): "Köln", "country": "DE"},
    "nationalities": [SDObj("DE"), SDObj("FR")],
    "age_in_years": 62,
    "score": 3.25,
})
issuer = SDJWTIssuer(user_claims, issuer_key, holder_key, extra_header_parameters={"typ": "dc+sd-jwt"},
                     add_decoy_claims=True)
issuance = issuer.sd_jwt_issuance

rc, out, err = sdk("verify", "--issuer-jwk", issuer_public, issuance)
checks.check("SDK verifies the reference issuance", rc == 0, err)
full = json.loads(out) if rc == 0 else {}
checks.check("SDK discloses every reference claim",
             full.get("address") == {"street_address": "Heidestraße 17", "locality": "Köln", "country": "DE"}
             and full.get("nationalities") == ["DE", "FR"] and full.get("given_name") == "Erika"
             and full.get("score") == 3.25 and full.get("age_in_years") == 62, out)

paths = json.dumps([["given_name"], ["address", "locality"], ["nationalities", 1]])
rc, presentation, err = sdk("present", "--issuer-jwk", issuer_public, "--holder-jwk", holder_private,
                            "--paths", paths, "--aud", AUD, "--nonce", NONCE, issuance)
checks.check("SDK presents the reference issuance with a KB-JWT", rc == 0 and presentation.count("~") == 5, err)
verified = reference_verify(presentation, AUD, NONCE)
checks.check("reference verifies the SDK presentation and its KB-JWT", isinstance(verified, dict), repr(verified))
if isinstance(verified, dict):
    checks.check("reference sees exactly the presented claims",
                 verified.get("given_name") == "Erika" and "family_name" not in verified
                 and verified.get("address") == {"locality": "Köln", "country": "DE"}
                 and verified.get("nationalities") == ["FR"], json.dumps(verified))
checks.check("reference rejects the SDK presentation for another nonce",
             isinstance(reference_verify(presentation, AUD, "other-nonce"), Exception))
rc, out, _ = sdk("verify", "--issuer-jwk", issuer_public, "--aud", AUD, "--nonce", NONCE, presentation)
checks.check("SDK verifies its own presentation of the reference credential", rc == 0 and "given_name" in out, out)
rc, _, _ = sdk("verify", "--issuer-jwk", issuer_public, "--aud", AUD, "--nonce", "other-nonce", presentation)
checks.check("SDK rejects its presentation for another nonce", rc == 1)
rc, _, _ = sdk("verify", "--issuer-jwk", holder_public, issuance)
checks.check("SDK rejects the reference issuance under another issuer key", rc == 1)

# The reference holder's own presentation (real-time iat) is accepted by the SDK verifier.
holder = SDJWTHolder(issuance)
holder.create_presentation({"family_name": True, "nationalities": [True, False]}, NONCE, AUD, holder_key)
rc, out, err = sdk("verify", "--issuer-jwk", issuer_public, "--aud", AUD, "--nonce", NONCE, holder.sd_jwt_presentation)
claims = json.loads(out) if rc == 0 else {}
checks.check("SDK verifies a reference holder presentation with KB-JWT",
             rc == 0 and claims.get("family_name") == "Mustermann" and claims.get("nationalities") == ["DE"]
             and "given_name" not in claims, err or out)

# 2. SDK-minted SD-JWT VC -> reference.
sdk_claims = dict(visible)
sdk_claims.update({
    "given_name": "Max", "family_name": "Müller", "birthdate": "1963-08-12",
    "address": {"street_address": "Weidenstraße 22", "postal_code": "51147", "country": "DE"},
    "nationalities": ["DE", "AT"],
    "place_of_birth": {"locality": "Berlin", "country": "DE"},
})
sd_paths = [["given_name"], ["family_name"], ["birthdate"], ["address", "street_address"], ["address", "postal_code"],
            ["nationalities", None], ["place_of_birth"], ["place_of_birth", "locality"], ["place_of_birth", "country"]]
rc, sdk_issuance, err = sdk("issue", "--issuer-jwk", issuer_private, "--holder-jwk", holder_public,
                            "--claims", json.dumps(sdk_claims), "--sd-paths", json.dumps(sd_paths), "--decoys", "2")
checks.check("SDK issues an SD-JWT VC", rc == 0 and sdk_issuance.endswith("~"), err)

verified = reference_verify(sdk_issuance)
checks.check("reference verifies the SDK issuance with every disclosure", isinstance(verified, dict), repr(verified))
if isinstance(verified, dict):
    verified.pop("cnf", None)
    checks.check("reference recovers the SDK's input claims", verified == sdk_claims, json.dumps(verified))

holder = SDJWTHolder(sdk_issuance)
holder.create_presentation({"given_name": True, "address": {"postal_code": True}, "nationalities": [False, True],
                            "place_of_birth": {"locality": True}}, NONCE, AUD, holder_key)
verified = reference_verify(holder.sd_jwt_presentation, AUD, NONCE)
checks.check("reference presents and verifies the SDK credential with a KB-JWT", isinstance(verified, dict), repr(verified))
if isinstance(verified, dict):
    checks.check("reference sees the chosen claims of the SDK credential",
                 verified.get("given_name") == "Max" and "family_name" not in verified
                 and verified.get("address") == {"postal_code": "51147", "country": "DE"}
                 and verified.get("nationalities") == ["AT"] and verified.get("place_of_birth") == {"locality": "Berlin"},
                 json.dumps(verified))
rc, out, err = sdk("verify", "--issuer-jwk", issuer_public, "--aud", AUD, "--nonce", NONCE, holder.sd_jwt_presentation)
checks.check("SDK verifies the reference holder's presentation of its credential",
             rc == 0 and json.loads(out).get("address") == {"postal_code": "51147", "country": "DE"}, err or out)

# An SDK presentation of the SDK credential, checked by the reference.
rc, presentation, err = sdk("present", "--issuer-jwk", issuer_public, "--holder-jwk", holder_private,
                            "--paths", json.dumps([["place_of_birth", "country"], ["birthdate"]]),
                            "--aud", AUD, "--nonce", NONCE, sdk_issuance)
verified = reference_verify(presentation, AUD, NONCE) if rc == 0 else RuntimeError(err)
checks.check("reference verifies an SDK presentation of an SDK credential",
             isinstance(verified, dict) and verified.get("place_of_birth") == {"country": "DE"}
             and verified.get("birthdate") == "1963-08-12" and "given_name" not in verified, repr(verified))
tampered = presentation[:-3] + ("AAA" if not presentation.endswith("AAA") else "BBB")
checks.check("reference rejects a tampered KB-JWT signature", isinstance(reference_verify(tampered, AUD, NONCE), Exception))

checks.finish()
