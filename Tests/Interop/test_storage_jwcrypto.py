#!/usr/bin/env python3
"""Cross-checks the SDK's key attestations (OpenID4VCI 1.0 Appendix D) with jwcrypto.

SDK -> jwcrypto: a key attestation made by `wallet interop storage key-attestation`
verifies in jwcrypto with the x5c leaf key; its leaf is issued by the printed anchor
(checked with pyca/cryptography); typ, attested_keys, nonce, iat/exp are as expected.
A tampered attestation fails in jwcrypto and in the SDK's verifier.
jwcrypto -> SDK: an attestation signed by jwcrypto under a Python-made chain verifies
with the SDK's verifier; a wrong nonce, a wrong typ and a tampered one do not.
"""
import base64
import datetime
import json
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from jwcrypto import jwk, jws

from interop_common import Checks, run_wallet


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def tamper_payload(compact: str, change) -> str:
    header, payload, signature = compact.split(".")
    claims = json.loads(unb64u(payload))
    change(claims)
    return header + "." + b64u(json.dumps(claims).encode()) + "." + signature


def jwcrypto_verifies(compact: str, leaf: x509.Certificate) -> bool:
    key = jwk.JWK.from_pyca(leaf.public_key())
    token = jws.JWS()
    token.deserialize(compact)
    try:
        token.verify(key, alg="ES256")
        return True
    except Exception:
        return False


def sdk_verify(compact: str, anchor_b64: str, nonce=None):
    args = ["interop", "storage", "verify-key-attestation", "--anchor", anchor_b64]
    if nonce is not None:
        args += ["--nonce", nonce]
    return run_wallet(*args, compact)


def make_chain():
    now = datetime.datetime.now(datetime.timezone.utc)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jwcrypto wallet provider root")])
    root = (x509.CertificateBuilder().subject_name(root_name).issuer_name(root_name)
            .public_key(root_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(root_key.public_key()), critical=False)
            .sign(root_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jwcrypto wallet provider")]))
            .issuer_name(root_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()), critical=False)
            .sign(root_key, hashes.SHA256()))
    return root, leaf, leaf_key


def jwcrypto_attestation(leaf, leaf_key, nonce, typ="key-attestation+jwt"):
    holder = jwk.JWK.generate(kty="EC", crv="P-256")
    now = int(time.time())
    claims = {"iat": now, "exp": now + 600, "nonce": nonce, "key_storage": ["iso_18045_moderate"],
              "user_authentication": ["iso_18045_moderate"], "attested_keys": [json.loads(holder.export_public())]}
    header = {"alg": "ES256", "typ": typ,
              "x5c": [base64.b64encode(leaf.public_bytes(serialization.Encoding.DER)).decode()]}
    token = jws.JWS(json.dumps(claims).encode())
    token.add_signature(jwk.JWK.from_pyca(leaf_key), alg="ES256", protected=json.dumps(header))
    return token.serialize(compact=True), json.loads(holder.export_public())


def main():
    checks = Checks("storage/jwcrypto")

    code, out, err = run_wallet("interop", "storage", "key-attestation", "--nonce", "c-nonce-42", "--count", "3")
    checks.check("SDK makes a key attestation", code == 0, err)
    if code != 0:
        checks.finish()
    made = json.loads(out)
    compact, anchor_b64 = made["attestation"], made["anchor"]
    anchor = x509.load_der_x509_certificate(base64.b64decode(anchor_b64))
    header = json.loads(unb64u(compact.split(".")[0]))
    claims = json.loads(unb64u(compact.split(".")[1]))
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))

    checks.check("header typ is key-attestation+jwt and alg ES256",
                 header.get("typ") == "key-attestation+jwt" and header.get("alg") == "ES256", header)
    checks.check("jwcrypto verifies the SDK attestation with the x5c leaf key", jwcrypto_verifies(compact, leaf))
    try:
        leaf.verify_directly_issued_by(anchor)
        chained = True
    except Exception as error:  # reported as a failed check
        chained = False
        print(error)
    checks.check("the x5c leaf is issued by the printed anchor (pyca/cryptography)", chained)
    checks.check("attested_keys are the three created keys", claims.get("attested_keys") == made["keys"], claims)
    checks.check("nonce, iat < exp, key_storage and user_authentication are present",
                 claims.get("nonce") == "c-nonce-42" and claims["iat"] < claims["exp"]
                 and claims.get("key_storage") == ["iso_18045_basic"]
                 and claims.get("user_authentication") == ["iso_18045_basic"], claims)
    code, out, err = sdk_verify(compact, anchor_b64, "c-nonce-42")
    checks.check("the SDK verifier accepts its own attestation", code == 0 and json.loads(out) == made["keys"], err)

    tampered = tamper_payload(compact, lambda c: c["attested_keys"].pop())
    checks.check("jwcrypto rejects a tampered attestation", not jwcrypto_verifies(tampered, leaf))
    code, _, err = sdk_verify(tampered, anchor_b64, "c-nonce-42")
    checks.check("the SDK verifier rejects a tampered attestation", code == 1 and "invalidSignature" in err, err)
    code, _, err = sdk_verify(compact, anchor_b64, "another-nonce")
    checks.check("the SDK verifier rejects a wrong nonce", code == 1 and "nonceMismatch" in err, err)

    root, py_leaf, py_leaf_key = make_chain()
    root_b64 = base64.b64encode(root.public_bytes(serialization.Encoding.DER)).decode()
    foreign, holder = jwcrypto_attestation(py_leaf, py_leaf_key, "n-7")
    code, out, err = sdk_verify(foreign, root_b64, "n-7")
    checks.check("the SDK verifier accepts a jwcrypto-made attestation", code == 0 and json.loads(out) == [holder], err)
    code, _, err = sdk_verify(foreign, anchor_b64, "n-7")
    checks.check("the SDK verifier rejects it under another trust anchor", code == 1 and "untrusted(" in err, err)
    code, _, err = sdk_verify(tamper_payload(foreign, lambda c: c.update(exp=c["exp"] + 86400)), root_b64, "n-7")
    checks.check("the SDK verifier rejects a tampered jwcrypto attestation", code == 1 and "invalidSignature" in err, err)
    wrong_typ, _ = jwcrypto_attestation(py_leaf, py_leaf_key, "n-7", typ="JWT")
    code, _, err = sdk_verify(wrong_typ, root_b64, "n-7")
    checks.check("the SDK verifier rejects typ JWT", code == 1 and "wrongType" in err, err)
    checks.finish()


if __name__ == "__main__":
    main()
