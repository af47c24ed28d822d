#!/usr/bin/env python3
"""Cross-checks the SDK's JOSE module against jwcrypto (PyPI), both directions.

SDK -> jwcrypto: JWS (ES256/ES384/ES512/EdDSA) made by the SDK verify in jwcrypto;
JWE (ECDH-ES with A128GCM/A192GCM/A256GCM) made by the SDK decrypt in jwcrypto.
jwcrypto -> SDK: the same, made by jwcrypto and verified/decrypted by the SDK.
Negative checks: a tampered JWS and a JWE for another key are refused by the SDK.

The SDK is reached through `$WALLET_BIN interop jose <subcommand> ...`.
Prints one line per check and `N passed, M failed`; exits non-zero on any failure.
"""
import base64
import json
import os
import subprocess
import sys

from jwcrypto import jwe, jwk, jws

WALLET_BIN = os.environ.get("WALLET_BIN")
if not WALLET_BIN:
    print("WALLET_BIN is not set", file=sys.stderr)
    sys.exit(2)

passed = 0
failed = 0


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sdk(*args):
    result = subprocess.run([WALLET_BIN, "interop", "jose", *args], capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout.strip(), result.stderr.strip()


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}".rstrip())


def run_check(name, body):
    try:
        ok, detail = body()
    except Exception as error:  # any exception is a failed check, reported and counted
        ok, detail = False, f"{type(error).__name__}: {error}"
    check(name, ok, detail)


SIGNING_KEYS = {
    "ES256": lambda: jwk.JWK.generate(kty="EC", crv="P-256", kid="es256-key"),
    "ES384": lambda: jwk.JWK.generate(kty="EC", crv="P-384"),
    "ES512": lambda: jwk.JWK.generate(kty="EC", crv="P-521"),
    "EdDSA": lambda: jwk.JWK.generate(kty="OKP", crv="Ed25519"),
}
ENCRYPTION_CURVES = ["P-256", "P-384", "P-521"]
ENCS = ["A128GCM", "A192GCM", "A256GCM"]
PAYLOAD = json.dumps({"iss": "interop", "n": 42, "text": "h\u00e9llo"}).encode()


def sdk_signs(alg):
    def body():
        key = SIGNING_KEYS[alg]()
        code, out, err = sdk("jws-sign", "--alg", alg, "--jwk", key.export_private(), "--payload", b64u(PAYLOAD))
        if code != 0:
            return False, err
        token = jws.JWS()
        token.deserialize(out)
        token.verify(key.public(), alg=alg)
        return token.payload == PAYLOAD, "payload differs"
    return body


def jwcrypto_signs(alg):
    def body():
        key = SIGNING_KEYS[alg]()
        token = jws.JWS(PAYLOAD)
        token.add_signature(key, alg=alg, protected=json.dumps({"alg": alg, "typ": "JWT"}))
        compact = token.serialize(compact=True)
        code, out, err = sdk("jws-verify", "--jwk", key.export_public(), compact)
        if code != 0:
            return False, err
        return unb64u(out) == PAYLOAD, "payload differs"
    return body


def sdk_refuses_tampered_jws():
    key = SIGNING_KEYS["ES256"]()
    token = jws.JWS(PAYLOAD)
    token.add_signature(key, alg="ES256", protected=json.dumps({"alg": "ES256"}))
    header, payload, signature = token.serialize(compact=True).split(".")
    tampered = ".".join([header, b64u(PAYLOAD + b" "), signature])
    code, _, err = sdk("jws-verify", "--jwk", key.export_public(), tampered)
    return code == 1 and "invalidSignature" in err, f"exit {code}: {err}"


def sdk_encrypts(curve, enc, zip_=False):
    def body():
        key = jwk.JWK.generate(kty="EC", crv=curve, kid="recipient")
        args = ["jwe-encrypt", "--jwk", key.export_public(), "--enc", enc, "--plaintext", b64u(PAYLOAD)]
        if zip_:
            args.append("--zip")
        code, out, err = sdk(*args)
        if code != 0:
            return False, err
        token = jwe.JWE()
        token.deserialize(out, key=key)
        header = json.loads(token.objects["protected"])
        ok = token.payload == PAYLOAD and header["alg"] == "ECDH-ES" and header["enc"] == enc
        return ok and header.get("kid") == "recipient", f"header {header}"
    return body


def jwcrypto_encrypts(curve, enc, apu=None, apv=None):
    def body():
        key = jwk.JWK.generate(kty="EC", crv=curve)
        protected = {"alg": "ECDH-ES", "enc": enc}
        if apu:
            protected["apu"] = b64u(apu)
        if apv:
            protected["apv"] = b64u(apv)
        token = jwe.JWE(PAYLOAD, json.dumps(protected))
        token.add_recipient(key)
        code, out, err = sdk("jwe-decrypt", "--jwk", key.export_private(), token.serialize(compact=True))
        if code != 0:
            return False, err
        return unb64u(out) == PAYLOAD, "plaintext differs"
    return body


def sdk_refuses_other_recipient():
    key = jwk.JWK.generate(kty="EC", crv="P-256")
    other = jwk.JWK.generate(kty="EC", crv="P-256")
    token = jwe.JWE(PAYLOAD, json.dumps({"alg": "ECDH-ES", "enc": "A128GCM"}))
    token.add_recipient(key)
    code, _, err = sdk("jwe-decrypt", "--jwk", other.export_private(), token.serialize(compact=True))
    return code == 1 and "decryptionFailed" in err, f"exit {code}: {err}"


for alg in SIGNING_KEYS:
    run_check(f"jws {alg}: SDK signs, jwcrypto verifies", sdk_signs(alg))
    run_check(f"jws {alg}: jwcrypto signs, SDK verifies", jwcrypto_signs(alg))
run_check("jws ES256: SDK refuses a jwcrypto JWS with a tampered payload", sdk_refuses_tampered_jws)

for curve in ENCRYPTION_CURVES:
    for enc in ENCS:
        run_check(f"jwe ECDH-ES {curve} {enc}: SDK encrypts, jwcrypto decrypts", sdk_encrypts(curve, enc))
        run_check(f"jwe ECDH-ES {curve} {enc}: jwcrypto encrypts, SDK decrypts", jwcrypto_encrypts(curve, enc))
run_check("jwe ECDH-ES P-256 A128GCM with apu/apv: jwcrypto encrypts, SDK decrypts",
          jwcrypto_encrypts("P-256", "A128GCM", apu=b"Alice", apv=b"verifier-nonce"))
run_check("jwe zip DEF: SDK encrypts, jwcrypto decrypts", sdk_encrypts("P-256", "A256GCM", zip_=True))
run_check("jwe: SDK refuses a jwcrypto JWE for another recipient", sdk_refuses_other_recipient)

print(f"{passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
