#!/usr/bin/env python3
"""Adversarial suite (issue 12): forged, tampered and malformed credentials, built here with
independent tools (pyca/cryptography, jwcrypto, cbor2, pycose), thrown at
`wallet sdjwt verify`, `wallet mdoc verify` and `wallet inspect`.

Every case names the typed error the SDK must refuse it with: the CLI prints the error's
stable identifier in brackets (`[SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch]`),
and a case passes only when the command exits 1 with that identifier (or one below it).
Controls (expected identifier None) are genuine inputs that must verify, so that each
refusal is shown to come from the one property the case changes.

Classes: profile confusion, key confusion, header confusion, certificate misuse, time
edges, canonicalisation, tampering, response status, resource exhaustion.
"""
import base64
import datetime
import hashlib
import hmac
import json
import os
import struct
import tempfile
import time

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier
from jwcrypto import jwk, jws
from pycose.keys import EC2Key
from pycose.keys.curves import P256
from pycose.messages import Sign1Message
from pycose.headers import Algorithm, X5chain
from pycose.algorithms import Es256

from interop_common import Checks, run_wallet

checks = Checks("adversarial")
WORK = tempfile.mkdtemp(prefix="wallet-adversarial-")
NOW = int(time.time())   # for values that need not be fresh (far past or future)


def now():
    """The time a case is built: KB-JWTs must be fresh when the SDK checks them, however
    long the suite has been running."""
    return int(time.time())
UTC = datetime.timezone.utc
DS_EKU = ObjectIdentifier("1.0.18013.5.1.2")
READER_EKU = ObjectIdentifier("1.0.18013.5.1.6")
MDL = "org.iso.18013.5.1.mDL"
NS = "org.iso.18013.5.1"
AUD = "https://verifier.example.org"
NONCE = "n-0S6_WzA2Mj"
ISS = "https://issuer.example"
counter = [0]


def path(name, data):
    counter[0] += 1
    file = os.path.join(WORK, f"{counter[0]:04d}-{name}")
    with open(file, "wb" if isinstance(data, bytes) else "w") as handle:
        handle.write(data)
    return file


def expect(cls, label, args, identifier):
    """Runs `wallet ARGS`: a control (identifier None) must exit 0; a case must exit 1 and
    name `identifier` (or an error below it) in brackets."""
    code, out, err = run_wallet(*args)
    if identifier is None:
        ok = code == 0
        detail = err
    else:
        start = err.find("[")
        end = err.find("]", start)
        named = err[start + 1:end] if start >= 0 and end > start else ""
        ok = code == 1 and (named == identifier or named.startswith(identifier + "."))
        detail = f"exit {code}: {err[:300]}"
    checks.check(f"[{cls}] {label}" + ("" if identifier is None else f" -> {identifier}"), ok, detail)


# ---------------------------------------------------------------------------------------
# X.509 (pyca/cryptography)

def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.COUNTRY_NAME, "UT")])


def certificate(subject, issuer_name, public_key, signing_key, ca=None, path_length=None, key_usage=None, eku=None,
                eku_critical=True, san=None, not_before=None, not_after=None, extra=None):
    """A certificate with exactly the extensions asked for (None omits one)."""
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name).public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before or datetime.datetime.now(UTC) - datetime.timedelta(days=30))
               .not_valid_after(not_after or datetime.datetime.now(UTC) + datetime.timedelta(days=365)))
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=path_length if ca else None), critical=True)
    if key_usage is not None:
        flags = dict(digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
                     key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False)
        flags.update({usage: True for usage in key_usage})
        builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
    if eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage(eku), critical=eku_critical)
    if san is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    if issuer_name != subject or True:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signing_key.public_key()),
                                        critical=False)
    for extension, critical in extra or []:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signing_key, hashes.SHA256() if not isinstance(signing_key, ed25519.Ed25519PrivateKey) else None)


def root(label, ca=True, path_length=0, key_usage=("key_cert_sign", "crl_sign"), key=None):
    key = key or ec.generate_private_key(ec.SECP256R1())
    return certificate(name(label), name(label), key.public_key(), key, ca=ca, path_length=path_length,
                       key_usage=key_usage), key


def pem(cert):
    return path("anchor.pem", cert.public_bytes(serialization.Encoding.PEM))


def der(cert):
    return cert.public_bytes(serialization.Encoding.DER)


# ---------------------------------------------------------------------------------------
# SD-JWT (jwcrypto for JWS, hand-made disclosures)

def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def disclosure(claim, value, salt=None):
    array = [salt or b64u(os.urandom(16)), value] if claim is None else [salt or b64u(os.urandom(16)), claim, value]
    return b64u(json.dumps(array).encode())


def digest(encoded):
    return b64u(hashlib.sha256(encoded.encode()).digest())


def jws_compact(header, payload, key, alg="ES256"):
    """A compact JWS over exactly `header` (whatever alg it names), signed with `key` by `alg`:
    ES256/ES384 with pyca/cryptography (raw r||s), EdDSA, or HS256 with jwcrypto."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    head = {k: v for k, v in header.items() if v is not None}   # None removes a member
    signing_input = (b64u(json.dumps(head).encode()) + "." + b64u(body)).encode()
    if alg == "HS256":
        # `key` is the raw secret; jwcrypto computes the same MAC (checked on the first use).
        signature = hmac.new(key, signing_input, hashlib.sha256).digest()
        if not HMAC_CHECKED:
            reference = jws.JWS(body)
            reference.add_signature(jwk.JWK(kty="oct", k=b64u(key)), alg="HS256", protected=json.dumps(head))
            assert reference.serialize(compact=True).endswith(b64u(signature))
            HMAC_CHECKED.append(True)
    else:
        private = key.get_op_key("sign")
        if alg == "EdDSA":
            signature = private.sign(signing_input)
        else:
            digest_algorithm = hashes.SHA384() if alg == "ES384" else hashes.SHA256()
            r, s = decode_dss_signature(private.sign(signing_input, ec.ECDSA(digest_algorithm)))
            size = (private.curve.key_size + 7) // 8
            signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return signing_input.decode() + "." + b64u(signature)


def unsigned_compact(header, payload, signature=b""):
    return ".".join([b64u(json.dumps(header).encode()), b64u(json.dumps(payload).encode()), b64u(signature)])


HMAC_CHECKED = []
ISSUER = jwk.JWK.generate(kty="EC", crv="P-256")
HOLDER = jwk.JWK.generate(kty="EC", crv="P-256")
ISSUER_FILE = path("issuer.jwk", ISSUER.export_public())
HOLDER_PUBLIC = json.loads(HOLDER.export_public())


def credential(claims=None, disclosed=None, header=None, key=ISSUER, alg="ES256", holder=HOLDER_PUBLIC, drop=()):
    """An SD-JWT VC: visible `claims` over the defaults, `disclosed` claims as disclosures."""
    payload = {"iss": ISS, "vct": "urn:eudi:pid:1", "iat": now() - 60, "exp": now() + 3600}
    if holder is not None:
        payload["cnf"] = {"jwk": holder}
    payload.update(claims or {})
    for claim in drop:
        payload.pop(claim, None)
    disclosures = [disclosure(claim, value) for claim, value in (disclosed or {"given_name": "Erika"}).items()]
    payload["_sd"] = sorted(digest(d) for d in disclosures)
    payload["_sd_alg"] = "sha-256"
    jwt = jws_compact({"alg": alg, "typ": "dc+sd-jwt", **(header or {})}, payload, key, alg)
    return jwt, disclosures


def key_binding(jwt, disclosures, claims=None, header=None, key=HOLDER, alg="ES256", drop=()):
    presented = "~".join([jwt] + disclosures) + "~"
    payload = {"iat": now(), "aud": AUD, "nonce": NONCE, "sd_hash": b64u(hashlib.sha256(presented.encode()).digest())}
    payload.update(claims or {})
    for claim in drop:
        payload.pop(claim, None)
    return presented + jws_compact({"alg": alg, "typ": "kb+jwt", **(header or {})}, payload, key, alg)


def sdjwt(cls, label, text, identifier, profile=None, anchor=None, bind=True, at=None):
    args = ["sdjwt", "verify", path("sdjwt.txt", text)]
    args += ["--anchor", anchor] if anchor else ["--issuer-key", ISSUER_FILE]
    if bind:
        args += ["--aud", AUD, "--nonce", NONCE]
    if profile:
        args += ["--profile", profile]
    if at:
        args += ["--at", at]
    expect(cls, label, args, identifier)


def presentation(**kwargs):
    kb = {k[3:]: v for k, v in kwargs.items() if k.startswith("kb_")}
    cred = {k: v for k, v in kwargs.items() if not k.startswith("kb_")}
    jwt, disclosures = credential(**cred)
    return key_binding(jwt, disclosures, **kb)


def iso(seconds):
    return datetime.datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- controls ---------------------------------------------------------------------------
sdjwt("control", "an SD-JWT VC with a KB-JWT verifies", presentation(), None)
sdjwt("control", "typ application/dc+sd-jwt is the same media type", presentation(header={"typ": "application/dc+sd-jwt"}), None)
unbound_jwt, _ = credential()
sdjwt("control", "an unbound presentation (no disclosures) verifies when no key binding is asked", unbound_jwt + "~", None, bind=False)

# --- profile confusion (the verifier, not the token, chooses the checks) ----------------
for typ in ["JWT", "statuslist+jwt", "example+sd-jwt", "vc+sd-jwt", "sd-jwt", "dc+sd-jwt+x"]:
    sdjwt("profile", f"typ {typ} under the default SD-JWT VC profile", presentation(header={"typ": typ}),
          "SDJWTError.invalidCredentialType")
jwt_no_typ = jws_compact({"alg": "ES256"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}}, ISSUER)
sdjwt("profile", "no typ at all", key_binding(jwt_no_typ, []), "SDJWTError.invalidCredentialType")
sdjwt("control", "typ JWT is accepted when the caller opts into plain SD-JWT", presentation(header={"typ": "JWT"}), None,
      profile="sd-jwt")
sdjwt("profile", "no vct", presentation(drop=("vct",)), "SDJWTError.missingClaim")
sdjwt("profile", "vct is a number", presentation(claims={"vct": 7}), "SDJWTError.invalidClaim")
for claim, value in [("iss", ISS), ("vct", "urn:eudi:pid:1"), ("exp", NOW + 3600), ("nbf", NOW - 10), ("cnf", {"jwk": HOLDER_PUBLIC}),
                     ("status", {"status_list": {"idx": 1, "uri": "https://x"}})]:
    jwt, disclosures = credential(drop=(claim,), disclosed={"given_name": "Erika", claim: value})
    sdjwt("profile", f"{claim} hidden in a disclosure (SD-JWT VC keeps it visible)", key_binding(jwt, disclosures),
          "SDJWTError.invalidClaim")
jwt, disclosures = credential(drop=("exp",), disclosed={"given_name": "Erika", "exp": NOW - 7200}, header={"typ": "example+sd-jwt"})
sdjwt("profile", "plain SD-JWT: an expired exp hidden in a disclosure is still checked", key_binding(jwt, disclosures),
      "SDJWTError.invalidTime.expired", profile="sd-jwt")
code, _, _ = run_wallet("sdjwt", "verify", path("p.txt", presentation()), "--issuer-key", ISSUER_FILE, "--profile", "jwt")
checks.check("[profile] an unknown --profile value is refused as wrong usage (exit 2)", code == 2)

# --- key confusion ----------------------------------------------------------------------
secret = os.urandom(32)
for label, holder, reason in [
    ("a symmetric oct key", {"kty": "oct", "k": b64u(secret)}, "SDJWTError.keyBinding.unsupportedHolderKey.symmetricKey"),
    ("a private EC key (d present)", json.loads(HOLDER.export_private()), "SDJWTError.keyBinding.unsupportedHolderKey.privateKeyMaterial"),
    ("an RSA key", json.loads(jwk.JWK.generate(kty="RSA", size=2048).export_public()), "SDJWTError.keyBinding.unsupportedHolderKey.unsupportedKeyType"),
    ("an X25519 key", json.loads(jwk.JWK.generate(kty="OKP", crv="X25519").export_public()),
     "SDJWTError.keyBinding.unsupportedHolderKey.unsupportedKeyType"),
]:
    jwt, disclosures = credential(holder=holder)
    presented = "~".join([jwt] + disclosures) + "~"
    sd_hash = b64u(hashlib.sha256(presented.encode()).digest())
    kb_key = secret if holder.get("kty") == "oct" else HOLDER
    forged = presented + jws_compact({"alg": "HS256" if holder.get("kty") == "oct" else "ES256", "typ": "kb+jwt"},
                                     {"iat": now(), "aud": AUD, "nonce": NONCE, "sd_hash": sd_hash}, kb_key,
                                     "HS256" if holder.get("kty") == "oct" else "ES256")
    sdjwt("key", f"cnf.jwk is {label}", forged, reason)
sdjwt("key", "cnf.jwk on P-256 but the KB-JWT signed by another key", presentation(kb_key=jwk.JWK.generate(kty="EC", crv="P-256")),
      "SDJWTError.keyBinding.invalidSignature.invalidSignature")
sdjwt("key", "the KB-JWT signed by the issuer's key", presentation(kb_key=ISSUER), "SDJWTError.keyBinding.invalidSignature")
p384 = jwk.JWK.generate(kty="EC", crv="P-384")
sdjwt("key", "cnf on P-384, KB-JWT claims ES256", presentation(holder=json.loads(p384.export_public()), kb_key=p384, kb_alg="ES384",
                                                              kb_header={"alg": "ES256"}), "SDJWTError.keyBinding.invalidSignature")
jwt, disclosures = credential()
presented = "~".join([jwt] + disclosures) + "~"
sd_hash = b64u(hashlib.sha256(presented.encode()).digest())
hmac_kb = jws_compact({"alg": "HS256", "typ": "kb+jwt"}, {"iat": now(), "aud": AUD, "nonce": NONCE, "sd_hash": sd_hash},
                      json.dumps(HOLDER_PUBLIC, sort_keys=True).encode(), "HS256")
sdjwt("key", "KB-JWT HS256 keyed with the holder's public JWK", presented + hmac_kb, "SDJWTError.keyBinding.invalidSignature")
sdjwt("key", "KB-JWT alg none", presented + unsigned_compact({"alg": "none", "typ": "kb+jwt"},
                                                             {"iat": now(), "aud": AUD, "nonce": NONCE, "sd_hash": sd_hash}),
      "SDJWTError.keyBinding.invalidJWT.algorithmNotAllowed")
issuer_as_hmac = jws_compact({"alg": "HS256", "typ": "dc+sd-jwt"},
                             {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}},
                             open(ISSUER_FILE, "rb").read(), "HS256")
sdjwt("key", "issuer JWT HS256 keyed with the issuer's public JWK text", key_binding(issuer_as_hmac, []),
      "SDJWTError.invalidIssuerSignature.algorithmKeyMismatch")
sdjwt("key", "issuer JWT alg none", key_binding(unsigned_compact({"alg": "none", "typ": "dc+sd-jwt"},
                                                                 {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}}), []),
      "SDJWTError.invalidIssuerJWT.algorithmNotAllowed")
attacker = jwk.JWK.generate(kty="EC", crv="P-256")
sdjwt("key", "issuer JWT signed by an attacker who embeds their jwk in the header",
      presentation(key=attacker, header={"jwk": json.loads(attacker.export_public())}), "SDJWTError.invalidIssuerSignature.invalidSignature")
sdjwt("key", "issuer JWT signed by an attacker naming the issuer's kid", presentation(key=attacker, header={"kid": ISSUER.thumbprint()}),
      "SDJWTError.invalidIssuerSignature.invalidSignature")
ed = jwk.JWK.generate(kty="OKP", crv="Ed25519")
sdjwt("key", "issuer JWT signed EdDSA while the issuer key is P-256", presentation(key=ed, alg="EdDSA"),
      "SDJWTError.invalidIssuerSignature.algorithmKeyMismatch")
sdjwt("key", "issuer JWT ES384 header over a P-256 key", presentation(header={"alg": "ES384"}), "SDJWTError.invalidIssuerSignature")
sdjwt("key", "no cnf while key binding is required", presentation(holder=None), "SDJWTError.keyBinding.missingHolderKey")
jwt, disclosures = credential()
sdjwt("key", "key binding required but no KB-JWT", "~".join([jwt] + disclosures) + "~", "SDJWTError.keyBinding.missing")

# --- header confusion -------------------------------------------------------------------
sdjwt("header", "crit names an unknown header", presentation(header={"crit": ["x-unknown"], "x-unknown": 1}),
      "SDJWTError.invalidIssuerSignature.unknownCriticalHeader")
sdjwt("header", "crit lists a standard parameter", presentation(header={"crit": ["alg"]}), "SDJWTError.invalidIssuerJWT")
sdjwt("header", "alg is not a string", key_binding(unsigned_compact({"alg": 7, "typ": "dc+sd-jwt"}, {"iss": ISS}, b"\0" * 64), []),
      "SDJWTError.invalidIssuerJWT")
sdjwt("header", "alg RS256 (not implemented)", key_binding(unsigned_compact({"alg": "RS256", "typ": "dc+sd-jwt"}, {"iss": ISS}, b"\0" * 256), []),
      "SDJWTError.invalidIssuerJWT.unsupportedAlgorithm")
sdjwt("header", "KB-JWT typ JWT", presentation(kb_header={"typ": "JWT"}), "SDJWTError.keyBinding.invalidType")
sdjwt("header", "KB-JWT without typ", presentation(kb_header={"typ": None}), "SDJWTError.keyBinding.invalidType")
sdjwt("header", "KB-JWT typ dc+sd-jwt", presentation(kb_header={"typ": "dc+sd-jwt"}), "SDJWTError.keyBinding.invalidType")
sdjwt("header", "duplicate alg member in the protected header", key_binding(
    b64u(b'{"alg":"ES256","alg":"none","typ":"dc+sd-jwt"}') + "." + b64u(b'{"iss":"x"}') + "." + b64u(b"\0" * 64), []),
    "SDJWTError.invalidIssuerJWT")

# --- key binding claims -----------------------------------------------------------------
sdjwt("binding", "aud is an array that contains the verifier", presentation(kb_claims={"aud": [AUD, "https://evil.example"]}),
      "SDJWTError.keyBinding.audienceMismatch")
sdjwt("binding", "aud is a one-element array", presentation(kb_claims={"aud": [AUD]}), "SDJWTError.keyBinding.audienceMismatch")
sdjwt("binding", "aud names another verifier", presentation(kb_claims={"aud": "https://evil.example"}), "SDJWTError.keyBinding.audienceMismatch")
sdjwt("binding", "aud missing", presentation(kb_drop=("aud",)), "SDJWTError.keyBinding.audienceMismatch")
sdjwt("binding", "aud differs in case", presentation(kb_claims={"aud": AUD.upper()}), "SDJWTError.keyBinding.audienceMismatch")
sdjwt("binding", "nonce differs", presentation(kb_claims={"nonce": "other"}), "SDJWTError.keyBinding.nonceMismatch")
sdjwt("binding", "nonce missing", presentation(kb_drop=("nonce",)), "SDJWTError.keyBinding.nonceMismatch")
sdjwt("binding", "nonce is a number", presentation(kb_claims={"nonce": 7}), "SDJWTError.keyBinding.invalidJWT.invalidClaim")
sdjwt("binding", "sd_hash missing", presentation(kb_drop=("sd_hash",)), "SDJWTError.keyBinding.sdHashMismatch")
sdjwt("binding", "sd_hash over another presentation", presentation(kb_claims={"sd_hash": b64u(hashlib.sha256(b"x").digest())}),
      "SDJWTError.keyBinding.sdHashMismatch")
jwt, disclosures = credential(disclosed={"given_name": "Erika", "family_name": "M"})
bound = key_binding(jwt, disclosures)
head, _, kb = bound.rpartition("~")
reordered = "~".join([jwt] + list(reversed(disclosures))) + "~" + kb
sdjwt("binding", "disclosures reordered after binding", reordered, "SDJWTError.keyBinding.sdHashMismatch")
sdjwt("binding", "a disclosure dropped after binding", "~".join([jwt, disclosures[0]]) + "~" + kb, "SDJWTError.keyBinding.sdHashMismatch")
sdjwt("binding", "transaction_data_hashes present though none was requested",
      presentation(kb_claims={"transaction_data_hashes": ["x"]}), "SDJWTError.keyBinding.transactionDataMismatch")

# --- time edges -------------------------------------------------------------------------
sdjwt("time", "exp 61 s ago (60 s skew)", presentation(claims={"exp": now() - 61}), "SDJWTError.invalidTime.expired")
sdjwt("control", "exp 50 s ago is inside the skew", presentation(claims={"exp": now() - 45}), None)
sdjwt("time", "exp exactly now minus the skew", presentation(claims={"exp": now() - 60 - 5}), "SDJWTError.invalidTime.expired")
sdjwt("time", "nbf in 2 minutes", presentation(claims={"nbf": now() + 120}), "SDJWTError.invalidTime.notYetValid")
sdjwt("time", "iat in 2 minutes", presentation(claims={"iat": now() + 120}), "SDJWTError.invalidTime.issuedInFuture")
sdjwt("time", "exp as a string", presentation(claims={"exp": str(now() + 3600)}), "SDJWTError.invalidIssuerJWT.invalidClaim")
sdjwt("time", "exp far in the past (epoch)", presentation(claims={"exp": 0}), "SDJWTError.invalidTime.expired")
sdjwt("time", "exp negative", presentation(claims={"exp": -1}), "SDJWTError.invalidTime.expired")
sdjwt("time", "KB-JWT iat missing", presentation(kb_drop=("iat",)), "SDJWTError.keyBinding.invalidTime.missing")
sdjwt("time", "KB-JWT iat 10 minutes old", presentation(kb_claims={"iat": now() - 600}), "SDJWTError.keyBinding.invalidTime.issuedTooLongAgo")
sdjwt("time", "KB-JWT iat in 2 minutes", presentation(kb_claims={"iat": now() + 120}), "SDJWTError.keyBinding.invalidTime.issuedInFuture")
sdjwt("time", "KB-JWT already expired", presentation(kb_claims={"exp": now() - 120}), "SDJWTError.keyBinding.invalidTime.expired")
sdjwt("time", "KB-JWT iat as a string", presentation(kb_claims={"iat": str(now())}), "SDJWTError.keyBinding.invalidJWT.invalidClaim")
sdjwt("time", "verification time before the credential's iat (--at)", presentation(), "SDJWTError.invalidTime", at=iso(NOW - 3600))

# --- disclosures and canonicalisation ---------------------------------------------------
jwt, disclosures = credential()
sdjwt("disclosure", "a disclosure no digest refers to", key_binding(jwt, disclosures + [disclosure("age", 62)]),
      "SDJWTError.disclosure.unreferenced")
sdjwt("disclosure", "the same disclosure twice", key_binding(jwt, disclosures * 2), "SDJWTError.disclosure.duplicate")
d = disclosure("given_name", "Erika")
dup = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC},
                                                         "_sd": [digest(d), digest(d)]}, ISSUER)
sdjwt("disclosure", "a digest listed twice in _sd", key_binding(dup, [d]), "SDJWTError.disclosure.duplicateDigest")
for reserved in ["_sd", "..."]:
    d = disclosure(reserved, "x")
    j = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}, "_sd": [digest(d)]}, ISSUER)
    sdjwt("disclosure", f"a disclosure named {reserved}", key_binding(j, [d]), "SDJWTError.disclosure.reservedClaimName")
d = disclosure("iss", "https://evil.example")
j = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}, "_sd": [digest(d)]}, ISSUER)
sdjwt("disclosure", "a disclosure overwriting a visible claim", key_binding(j, [d]), "SDJWTError.disclosure.claimOverwritten")
element = disclosure(None, "DE")
j = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}, "_sd": [digest(element)]}, ISSUER)
sdjwt("disclosure", "an array-element disclosure referenced from _sd", key_binding(j, [element]), "SDJWTError.disclosure.kindMismatch")
prop = disclosure("nationality", "DE")
j = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC},
                                                       "nationalities": [{"...": digest(prop)}]}, ISSUER)
sdjwt("disclosure", "a property disclosure referenced as an array element", key_binding(j, [prop]), "SDJWTError.disclosure.kindMismatch")
md5 = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "_sd_alg": "md5", "cnf": {"jwk": HOLDER_PUBLIC}}, ISSUER)
sdjwt("disclosure", "_sd_alg md5", key_binding(md5, []), "SDJWTError.unsupportedHashAlgorithm")
jwt, disclosures = credential()
padded = disclosures[0] + "=" * ((4 - len(disclosures[0]) % 4) % 4)
if padded != disclosures[0]:
    sdjwt("canonical", "a disclosure with base64 padding", key_binding(jwt, [padded]), "SDJWTError.disclosure.malformed")
else:
    sdjwt("canonical", "a disclosure with base64 padding", key_binding(jwt, [disclosures[0] + "===="]), "SDJWTError.disclosure.malformed")
std = base64.b64encode(json.dumps(["++//salt??>>", "given_name", "Érika ~~~ ÿÿ"]).encode()).decode().rstrip("=")
sdjwt("canonical", "a disclosure in standard (not url-safe) base64", key_binding(jwt, [std]) if ("+" in std or "/" in std) else
      key_binding(jwt, ["a+b/"]), "SDJWTError.disclosure.malformed")
raw = disclosures[0]
alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
if len(raw) % 4 in (2, 3):
    last = alphabet.index(raw[-1])
    tweaked = raw[:-1] + alphabet[last | 1] if alphabet[last | 1] != raw[-1] else raw[:-1] + alphabet[last ^ 1]
    sdjwt("canonical", "a disclosure with non-zero trailing bits", key_binding(jwt, [tweaked]), "SDJWTError.disclosure.malformed")
else:
    sdjwt("canonical", "a disclosure with non-zero trailing bits", key_binding(jwt, [raw + "B"]), "SDJWTError.disclosure.malformed")
sdjwt("canonical", "a disclosure that is a JSON object", key_binding(jwt, [b64u(b'{"a":1}')]), "SDJWTError.disclosure.malformed")
sdjwt("canonical", "a disclosure with four elements", key_binding(jwt, [b64u(b'["s","n","v","x"]')]), "SDJWTError.disclosure.malformed")
sdjwt("canonical", "a disclosure whose salt is a number", key_binding(jwt, [b64u(b'[1,"n","v"]')]), "SDJWTError.disclosure.malformed")
sdjwt("canonical", "a disclosure that is not JSON", key_binding(jwt, [b64u(b'["s","n",]')]), "SDJWTError.disclosure.notJSON")
sdjwt("canonical", "a disclosure with invalid UTF-8", key_binding(jwt, [b64u(b'["s","n","\xff"]')]), "SDJWTError.disclosure.notJSON")
sdjwt("canonical", "an empty disclosure between ~~", jwt + "~~" + disclosures[0] + "~", "SDJWTError.malformed", bind=False)
sdjwt("canonical", "whitespace inside the compact form", presentation().replace("~", " ~", 1), "SDJWTError.malformed")
jwt_parts = jwt.split(".")
sdjwt("canonical", "issuer JWT payload with base64 padding", key_binding(".".join([jwt_parts[0], jwt_parts[1] + "==", jwt_parts[2]]), disclosures),
      "SDJWTError.invalidIssuerJWT")
sdjwt("canonical", "issuer JWT payload re-encoded (same JSON, other bytes)",
      key_binding(".".join([jwt_parts[0], b64u(json.dumps(json.loads(base64.urlsafe_b64decode(jwt_parts[1] + "==")), indent=1).encode()),
                            jwt_parts[2]]), disclosures), "SDJWTError.invalidIssuerSignature.invalidSignature")
dup_payload = b'{"iss":"https://issuer.example","iss":"https://evil.example","vct":"x"}'
sdjwt("canonical", "issuer payload with a duplicate member", key_binding(jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, dup_payload, ISSUER), []),
      "SDJWTError.invalidIssuerJWT")
sdjwt("canonical", "a JWS with four parts", key_binding(jwt + ".x", disclosures), "SDJWTError.invalidIssuerJWT")
sdjwt("canonical", "signature bit flipped", key_binding(".".join(jwt_parts[:2] + [b64u(bytes([base64.urlsafe_b64decode(jwt_parts[2] + "==")[0] ^ 1])
                                                                          + base64.urlsafe_b64decode(jwt_parts[2] + "==")[1:])]), disclosures),
      "SDJWTError.invalidIssuerSignature.invalidSignature")
sdjwt("canonical", "a truncated signature", key_binding(".".join(jwt_parts[:2] + [b64u(base64.urlsafe_b64decode(jwt_parts[2] + "==")[:60])]),
                                                        disclosures), "SDJWTError.invalidIssuerSignature.malformedSignature")
sdjwt("canonical", "a signature in base64url with non-zero trailing bits", key_binding(".".join(jwt_parts[:2] + [jwt_parts[2][:-1] + "B"
      if jwt_parts[2][-1] != "B" else jwt_parts[2][:-1] + "C"]), disclosures), "SDJWTError.invalidIssuerJWT.malformed")

# --- resource exhaustion (SD-JWT) -------------------------------------------------------
jwt, disclosures = credential()
sdjwt("exhaustion", "4,097 disclosures", jwt + "~" + "~".join(["AA"] * 4097) + "~", "SDJWTError.limitExceeded", bind=False)
sdjwt("exhaustion", "an SD-JWT over 4 MiB", jwt + "~" + ("A" * (4 * 1024 * 1024)) + "~", "SDJWTError.limitExceeded", bind=False)
deep = "[" * 10000 + "]" * 10000
sdjwt("exhaustion", "a disclosure nesting 10,000 arrays", key_binding(jwt, [b64u(('["s","n",' + deep + ']').encode())]),
      "SDJWTError.disclosure.notJSON")
nested = {"leaf": 1}
chain = []
for i in range(120):
    d = disclosure(f"c{i}", nested)
    chain.append(d)
    nested = {"_sd": [digest(d)]}
j = jws_compact({"alg": "ES256", "typ": "dc+sd-jwt"}, {"iss": ISS, "vct": "x", "cnf": {"jwk": HOLDER_PUBLIC}, **nested}, ISSUER)
sdjwt("exhaustion", "120 levels of recursive disclosures", key_binding(j, chain), "SDJWTError.limitExceeded")

# --- certificate misuse (SD-JWT VC issuer keys from x5c) --------------------------------
ca, ca_key = root("SD-JWT root", path_length=None)
ANCHOR = pem(ca)


def x5c_issuer(san=(x509.DNSName("issuer.example"),), key_usage=("digital_signature",), ca_flag=False, issuer=(ca, ca_key),
               not_after=None, not_before=None, chain_extra=(), extra=None):
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = certificate(name("SD-JWT issuer"), issuer[0].subject, leaf_key.public_key(), issuer[1], ca=ca_flag,
                       key_usage=key_usage, san=list(san) if san is not None else None, not_after=not_after,
                       not_before=not_before, extra=extra)
    chain = [base64.b64encode(der(c)).decode() for c in [leaf, *chain_extra]]
    return jwk.JWK.from_pyca(leaf_key), chain


def x5c_case(cls, label, identifier, claims=None, anchor=None, **kwargs):
    key, chain = x5c_issuer(**kwargs)
    text = presentation(key=key, header={"x5c": chain}, claims=claims)
    sdjwt(cls, label, text, identifier, anchor=anchor or ANCHOR)


x5c_case("control", "x5c leaf with a dNSName naming the https iss", None)
x5c_case("control", "x5c leaf with a URI SAN equal to iss", None, san=(x509.UniformResourceIdentifier(ISS),))
x5c_case("certificate", "leaf SAN names another host", "SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch",
         san=(x509.DNSName("evil.example"),))
x5c_case("certificate", "leaf without subjectAltName", "SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch", san=None)
x5c_case("certificate", "leaf SAN is a subdomain of the iss host", "SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch",
         san=(x509.DNSName("a.issuer.example"),))
x5c_case("certificate", "leaf SAN host matches but iss is http", "SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch",
         claims={"iss": "http://issuer.example"})
x5c_case("certificate", "leaf SAN URI differs by a path", "SDJWTError.untrustedIssuer.subjectAlternativeNameMismatch",
         san=(x509.UniformResourceIdentifier(ISS + "/other"),))
x5c_case("certificate", "leaf key usage without digitalSignature", "SDJWTError.untrustedIssuer.missingKeyUsage",
         key_usage=("key_agreement",))
x5c_case("certificate", "leaf is a CA", "SDJWTError.untrustedIssuer.leafIsCA", ca_flag=True, key_usage=("digital_signature", "key_cert_sign"))
x5c_case("certificate", "leaf expired", "SDJWTError.untrustedIssuer.expired",
         not_before=datetime.datetime.now(UTC) - datetime.timedelta(days=30), not_after=datetime.datetime.now(UTC) - datetime.timedelta(days=1))
x5c_case("certificate", "leaf not yet valid", "SDJWTError.untrustedIssuer.notYetValid",
         not_before=datetime.datetime.now(UTC) + datetime.timedelta(days=1))
stranger, stranger_key = root("Stranger root", path_length=None)
x5c_case("certificate", "chain to a root that is not an anchor", "SDJWTError.untrustedIssuer.unknownAnchor", issuer=(stranger, stranger_key))
mid_key = ec.generate_private_key(ec.SECP256R1())
not_ca = certificate(name("Not a CA"), ca.subject, mid_key.public_key(), ca_key, ca=False, key_usage=("digital_signature",))
x5c_case("certificate", "intermediate without the CA flag", "SDJWTError.untrustedIssuer.issuerNotCA", issuer=(not_ca, mid_key),
         chain_extra=(not_ca,))
# Security level 2 for every certificate of a path: an RSA-1024 intermediate under the anchor is refused
# (a 2048-bit one is the control). pyca refuses to sign over SHA-1; the Swift tests cover that digest.
for bits, expected in [(2048, None), (1024, "SDJWTError.untrustedIssuer.weakCryptography")]:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    rsa_mid = certificate(name(f"RSA-{bits} intermediate"), ca.subject, rsa_key.public_key(), ca_key, ca=True,
                          key_usage=("key_cert_sign", "crl_sign"))
    x5c_case("control" if expected is None else "certificate", f"intermediate with an RSA-{bits} key", expected,
             issuer=(rsa_mid, rsa_key), chain_extra=(rsa_mid,))
x5c_case("certificate", "leaf with an unknown critical extension", "SDJWTError.untrustedIssuer.unhandledCriticalExtension",
         extra=[(x509.UnrecognizedExtension(ObjectIdentifier("1.3.6.1.4.1.55555.1"), b"\x05\x00"), True)])
# Extensions are read up to 256 (checking each against all the others once made a 20,000-extension
# leaf cost seconds before any signature was checked); pyca builds both leaves, signed.
many = lambda count: [(x509.UnrecognizedExtension(ObjectIdentifier(f"1.3.6.1.4.1.55555.2.{n}"), b"\x05\x00"), False)
                      for n in range(count)]
x5c_case("control", "x5c leaf with 200 extra non-critical extensions", None, extra=many(200))
x5c_case("certificate", "x5c leaf with 300 extra non-critical extensions", "SDJWTError.untrustedIssuer.malformedCertificate",
         extra=many(300))
key, chain = x5c_issuer()
sdjwt("certificate", "x5c entry is not base64", presentation(key=key, header={"x5c": ["%%%"]}), "SDJWTError.untrustedIssuer.malformedCertificate",
      anchor=ANCHOR)
sdjwt("certificate", "x5c entry is base64 of garbage", presentation(key=key, header={"x5c": [base64.b64encode(b"\x30\x03\x02\x01\x01").decode()]}),
      "SDJWTError.untrustedIssuer.malformedCertificate", anchor=ANCHOR)
sdjwt("certificate", "no x5c though the verifier trusts certificates", presentation(key=key), "SDJWTError.untrustedIssuer.missingCertificate",
      anchor=ANCHOR)
sdjwt("certificate", "x5c of a valid leaf, JWT signed by another key", presentation(key=attacker, header={"x5c": chain}),
      "SDJWTError.invalidIssuerSignature.invalidSignature", anchor=ANCHOR)
sdjwt("certificate", "x5c naming iss, but no iss in the credential", presentation(key=key, header={"x5c": chain}, drop=("iss",)),
      "SDJWTError.missingClaim", anchor=ANCHOR)


def with_version(certificate_der, encoded):
    """The certificate with its [0] version INTEGER (2, for v3) replaced by these content bytes;
    the certificate's and the tbsCertificate's two-byte lengths grow to match."""
    original = b"\xa0\x03\x02\x01\x02"
    assert certificate_der[0:2] == b"\x30\x82" and certificate_der[4:6] == b"\x30\x82" and certificate_der[8:13] == original
    replacement = bytes([0xA0, len(encoded) + 2, 0x02, len(encoded)]) + encoded
    out = bytearray(certificate_der[:8] + replacement + certificate_der[13:])
    growth = len(replacement) - len(original)
    for offset in (2, 6):
        out[offset:offset + 2] = (int.from_bytes(out[offset:offset + 2], "big") + growth).to_bytes(2, "big")
    return bytes(out)


# A version INTEGER of 2^63 - 1, which OpenSSL reads as a long: the wallet once trapped adding one to it.
huge_version = with_version(base64.b64decode(chain[0]), b"\x7f" + b"\xff" * 7)
sdjwt("certificate", "x5c leaf whose version INTEGER is 2^63 - 1", presentation(key=key, header={"x5c": [base64.b64encode(huge_version).decode()]}),
      "SDJWTError.untrustedIssuer.malformedCertificate", anchor=ANCHOR)
self_key = ec.generate_private_key(ec.SECP256R1())
self_signed = certificate(name("Self"), name("Self"), self_key.public_key(), self_key, ca=False, key_usage=("digital_signature",),
                          san=[x509.DNSName("issuer.example")])
sdjwt("certificate", "a self-signed leaf that is not an anchor",
      presentation(key=jwk.JWK.from_pyca(self_key), header={"x5c": [base64.b64encode(der(self_signed)).decode()]}),
      "SDJWTError.untrustedIssuer.unknownAnchor", anchor=ANCHOR)


# ---------------------------------------------------------------------------------------
# mdoc (cbor2 + cryptography COSE, pycose for one control)

def tag24(value):
    return cbor2.CBORTag(24, cbor2.dumps(value))


def cose_key(key):
    numbers = key.public_key().public_numbers()
    return {1: 2, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}


def raw_signature(key, message):
    r, s = decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def sign1(payload, key, protected=None, unprotected=None, detached=False, protected_bytes=None):
    protected = {1: -7} if protected is None else protected
    body = protected_bytes if protected_bytes is not None else (cbor2.dumps(protected) if protected else b"")
    signature = raw_signature(key, cbor2.dumps(["Signature1", body, b"", payload]))
    return [body, unprotected or {}, None if detached else payload, signature]


def tdate(moment):
    return cbor2.CBORTag(0, moment.strftime("%Y-%m-%dT%H:%M:%SZ"))


MDOC_IACA, MDOC_IACA_KEY = root("mdoc IACA")
MDOC_ANCHOR = pem(MDOC_IACA)


def ds_certificate(eku=(DS_EKU,), key_usage=("digital_signature",), ca=None, issuer=(MDOC_IACA, MDOC_IACA_KEY), not_before=None,
                   not_after=None, key=None, extra=None):
    key = key or ec.generate_private_key(ec.SECP256R1())
    cert = certificate(name("mdoc DS"), issuer[0].subject, key.public_key(), issuer[1], ca=ca, key_usage=key_usage,
                       eku=list(eku) if eku is not None else None, not_before=not_before, not_after=not_after, extra=extra)
    return cert, key


DEVICE_EPH = ec.generate_private_key(ec.SECP256R1())
READER_EPH = ec.generate_private_key(ec.SECP256R1())
TRANSCRIPT = [tag24({0: "1.0", 1: [1, tag24(cose_key(DEVICE_EPH))]}), tag24(cose_key(READER_EPH)), None]
TRANSCRIPT_FILE = path("transcript.hex", cbor2.dumps(TRANSCRIPT).hex())
READER_KEY_HEX = READER_EPH.private_numbers().private_value.to_bytes(32, "big").hex()


def mdoc(ds=None, elements=None, mso_changes=None, validity=None, signed=None, issuer_protected=None, issuer_unprotected=None,
         issuer_signer=None, device_signer=None, device_protected=None, device_unprotected=None, transcript=TRANSCRIPT,
         status=0, documents=True, doc_type=MDL, item_changes=None, mac=False, x5chain=None, response_changes=None,
         device_name_spaces=None, mso_bytes=None, issuer_auth=None, mso_bytes_from=None):
    """A DeviceResponse with one mDL, each part replaceable by a case."""
    cert, ds_key = ds or ds_certificate()
    device_key = ec.generate_private_key(ec.SECP256R1())
    items, digests = [], {}
    for index, (identifier, value) in enumerate((elements or {"family_name": "Mustermann", "age_over_18": True}).items()):
        item = {"digestID": index, "random": os.urandom(16), "elementIdentifier": identifier, "elementValue": value}
        encoded = tag24(item)
        digests[index] = hashlib.sha256(cbor2.dumps(encoded)).digest()
        items.append(encoded)
    now = datetime.datetime.now(UTC).replace(microsecond=0)
    valid_from, valid_until = validity or (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30))
    mso = {"version": "1.0", "digestAlgorithm": "SHA-256", "valueDigests": {NS: digests},
           "deviceKeyInfo": {"deviceKey": cose_key(device_key)}, "docType": MDL,
           "validityInfo": {"signed": tdate(signed or now), "validFrom": tdate(valid_from), "validUntil": tdate(valid_until)}}
    if mso_changes:
        mso_changes(mso)
    if mso_bytes_from is not None:
        mso_bytes = mso_bytes_from["bytes"]
    payload = cbor2.dumps(cbor2.CBORTag(24, mso_bytes if mso_bytes is not None else cbor2.dumps(mso)))
    chain = x5chain if x5chain is not None else der(cert)
    unprotected = {33: chain} if issuer_unprotected is None else issuer_unprotected
    auth = issuer_auth or sign1(payload, issuer_signer or ds_key, protected=issuer_protected, unprotected=unprotected)
    if item_changes:
        item_changes(items)
    name_spaces = tag24(device_name_spaces or {})
    device_auth_bytes = cbor2.dumps(tag24(["DeviceAuthentication", transcript, doc_type, name_spaces]))
    if mac:
        peer = READER_EPH.public_key()
        zab = device_key.exchange(ec.ECDH(), peer)
        salt = hashlib.sha256(cbor2.dumps(tag24(TRANSCRIPT))).digest()
        emac = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"EMacKey").derive(zab)
        prot = cbor2.dumps(device_protected if device_protected is not None else {1: 5}) if device_protected != {} else b""
        tag = hmac.new(emac, cbor2.dumps(["MAC0", prot, b"", device_auth_bytes]), hashlib.sha256).digest()
        device_auth = {"deviceMac": [prot, device_unprotected or {}, None, tag]}
    else:
        device_auth = {"deviceSignature": sign1(device_auth_bytes, device_signer or device_key, protected=device_protected,
                                                unprotected=device_unprotected, detached=True)}
    document = {"docType": doc_type, "issuerSigned": {"nameSpaces": {NS: items}, "issuerAuth": auth},
                "deviceSigned": {"nameSpaces": name_spaces, "deviceAuth": device_auth}}
    response = {"version": "1.0", "status": status}
    if documents:
        response["documents"] = [document]
    if response_changes:
        response_changes(response)
    return cbor2.dumps(response)


def mdoc_case(cls, label, response, identifier, anchor=None, mac=False, at=None):
    args = ["mdoc", "verify", "--response", path("response.hex", response.hex() if isinstance(response, bytes) else response),
            "--transcript", TRANSCRIPT_FILE, "--anchor", anchor or MDOC_ANCHOR]
    if mac:
        args += ["--reader-key", READER_KEY_HEX]
    if at:
        args += ["--at", at]
    expect(cls, label, args, identifier)


def days(n):
    return datetime.datetime.now(UTC).replace(microsecond=0) + datetime.timedelta(days=n)


# --- controls ---------------------------------------------------------------------------
mdoc_case("control", "a DeviceResponse signed by an Annex B document signer", mdoc(), None)
mdoc_case("control", "deviceMac with alg protected", mdoc(mac=True), None, mac=True)
array_ds = ds_certificate()
mdoc_case("control", "x5chain as a one-element array", mdoc(ds=array_ds, x5chain=[der(array_ds[0])]), None)
control_cert, control_key = ds_certificate()
pycose_msg = Sign1Message(phdr={Algorithm: Es256}, uhdr={X5chain: der(control_cert)},
                          payload=cbor2.dumps(cbor2.CBORTag(24, b"")))
# A pycose-made issuerAuth verifies in pycose; the SDK accepts the shape (checked through a full response below).
numbers = control_key.public_key().public_numbers()
pycose_msg.key = EC2Key(crv=P256, d=control_key.private_numbers().private_value.to_bytes(32, "big"),
                        x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
checks.check("[control] pycose signs an issuerAuth-shaped COSE_Sign1 with alg protected",
             cbor2.loads(pycose_msg.encode(tag=False))[0] == cbor2.dumps({1: -7}))

# --- certificate misuse -----------------------------------------------------------------
mdoc_case("certificate", "DS certificate without the mdoc DS extended key usage",
          mdoc(ds=ds_certificate(eku=None)), "MdocError.untrustedIssuer.missingExtendedKeyUsage")
mdoc_case("certificate", "DS certificate with the reader EKU instead", mdoc(ds=ds_certificate(eku=(READER_EKU,))),
          "MdocError.untrustedIssuer.missingExtendedKeyUsage")
mdoc_case("certificate", "DS certificate with serverAuth instead", mdoc(ds=ds_certificate(eku=(ExtendedKeyUsageOID.SERVER_AUTH,))),
          "MdocError.untrustedIssuer.missingExtendedKeyUsage")
mdoc_case("certificate", "DS certificate without digitalSignature", mdoc(ds=ds_certificate(key_usage=("key_agreement",))),
          "MdocError.untrustedIssuer.missingKeyUsage")
mdoc_case("certificate", "DS certificate without a keyUsage extension", mdoc(ds=ds_certificate(key_usage=None)),
          "MdocError.untrustedIssuer.missingKeyUsage")
mdoc_case("certificate", "DS certificate that is a CA", mdoc(ds=ds_certificate(ca=True, key_usage=("digital_signature", "key_cert_sign"))),
          "MdocError.untrustedIssuer.leafIsCA")
mdoc_case("certificate", "the IACA key signs the MSO itself", mdoc(ds=(MDOC_IACA, MDOC_IACA_KEY)), "MdocError.untrustedIssuer.leafIsCA")
for label, kwargs, reason in [
    ("an IACA that is not a CA", dict(ca=False, key_usage=("key_cert_sign", "crl_sign")), "MdocError.untrustedIssuer.issuerNotCA"),
    ("an IACA without basicConstraints", dict(ca=None, key_usage=("key_cert_sign", "crl_sign")), "MdocError.untrustedIssuer.issuerNotCA"),
    ("an IACA without keyCertSign", dict(key_usage=("crl_sign", "digital_signature")), "MdocError.untrustedIssuer.issuerNotCA"),
    ("an IACA without pathLenConstraint", dict(path_length=None), "MdocError.untrustedIssuer.pathLengthNotConstrained"),
    ("an IACA with pathLenConstraint 1", dict(path_length=1), "MdocError.untrustedIssuer.pathLengthNotConstrained"),
]:
    weak_iaca, weak_key = root("Weak IACA", **kwargs)
    mdoc_case("certificate", f"DS under {label}", mdoc(ds=ds_certificate(issuer=(weak_iaca, weak_key))), reason, anchor=pem(weak_iaca))
other_iaca, other_key = root("Other IACA")
mdoc_case("certificate", "DS under an IACA that is not trusted", mdoc(ds=ds_certificate(issuer=(other_iaca, other_key))),
          "MdocError.untrustedIssuer.unknownAnchor")
mdoc_case("certificate", "DS certificate expired", mdoc(ds=ds_certificate(not_before=days(-60), not_after=days(-1))),
          "MdocError.untrustedIssuer.expired")
mdoc_case("certificate", "DS certificate not yet valid", mdoc(ds=ds_certificate(not_before=days(2), not_after=days(60))),
          "MdocError.untrustedIssuer.notYetValid")
mdoc_case("certificate", "DS certificate expired when the MSO was signed, valid now",
          mdoc(ds=ds_certificate(not_before=days(-3), not_after=days(300)), signed=days(-20)), "MdocError.untrustedIssuer.notValidAt")
mdoc_case("certificate", "DS certificate with an unknown critical extension",
          mdoc(ds=ds_certificate(extra=[(x509.UnrecognizedExtension(ObjectIdentifier("1.3.6.1.4.1.55555.2"), b"\x05\x00"), True)])),
          "MdocError.untrustedIssuer.unhandledCriticalExtension")
mdoc_case("certificate", "x5chain is an empty array", mdoc(x5chain=[]), "MdocError.cose")
mdoc_case("certificate", "x5chain is not a certificate", mdoc(x5chain=b"\x30\x03\x02\x01\x01"), "MdocError.untrustedIssuer.malformedCertificate")
mdoc_case("certificate", "no x5chain", mdoc(issuer_unprotected={}), "MdocError.untrustedIssuer.missingCertificate")
mdoc_case("certificate", "x5chain of a genuine DS, MSO signed by another key", mdoc(issuer_signer=ec.generate_private_key(ec.SECP256R1())),
          "MdocError.issuerSignatureInvalid.invalidSignature")
rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
rsa_ds = certificate(name("RSA DS"), MDOC_IACA.subject, rsa_key.public_key(), MDOC_IACA_KEY, key_usage=("digital_signature",), eku=[DS_EKU])
mdoc_case("certificate", "DS certificate with an RSA key", mdoc(ds=(rsa_ds, ec.generate_private_key(ec.SECP256R1()))),
          "MdocError.untrustedIssuer.unsupportedLeafKey")
reader_root, reader_root_key = root("Reader root")
mdoc_case("certificate", "a reader authentication certificate signs the MSO",
          mdoc(ds=ds_certificate(eku=(READER_EKU,), issuer=(reader_root, reader_root_key))), "MdocError.untrustedIssuer.missingExtendedKeyUsage",
          anchor=pem(reader_root))

# --- COSE header confusion --------------------------------------------------------------
mdoc_case("header", "issuerAuth alg only in the unprotected bucket",
          mdoc(issuer_protected={}, issuer_unprotected={1: -7, 33: der(control_cert)}, ds=(control_cert, control_key)),
          "MdocError.issuerSignatureInvalid.algorithmNotProtected")
mdoc_case("header", "deviceSignature alg only in the unprotected bucket", mdoc(device_protected={}, device_unprotected={1: -7}),
          "MdocError.deviceAuthenticationFailed.algorithmNotProtected")
mdoc_case("header", "deviceMac alg only in the unprotected bucket", mdoc(mac=True, device_protected={}, device_unprotected={1: 5}),
          "MdocError.deviceAuthenticationFailed.algorithmNotProtected", mac=True)
mdoc_case("header", "issuerAuth alg in both buckets", mdoc(issuer_unprotected={1: -7, 33: der(control_cert)}, ds=(control_cert, control_key)),
          "MdocError.cose.duplicateHeaderLabel")
mdoc_case("header", "issuerAuth without alg", mdoc(issuer_protected={4: b"kid"}), "MdocError.issuerSignatureInvalid.missingAlgorithm")
mdoc_case("header", "issuerAuth alg ES384 over a P-256 key", mdoc(issuer_protected={1: -35}), "MdocError.issuerSignatureInvalid.algorithmKeyMismatch")
mdoc_case("header", "issuerAuth alg as text \"ES256\"", mdoc(issuer_protected={1: "ES256"}), "MdocError.issuerSignatureInvalid.unsupportedAlgorithmName")
mdoc_case("header", "issuerAuth alg HMAC 256/256", mdoc(issuer_protected={1: 5}), "MdocError.issuerSignatureInvalid.algorithmKeyMismatch")
mdoc_case("header", "issuerAuth crit naming an unknown label", mdoc(issuer_protected={1: -7, 2: [99], 99: 1}), "MdocError.cose.unknownCriticalHeader")
mdoc_case("header", "issuerAuth crit in the unprotected bucket",
          mdoc(issuer_unprotected={2: [33], 33: der(control_cert)}, ds=(control_cert, control_key)), "MdocError.cose.malformed")
mdoc_case("header", "issuerAuth protected header is not a map",
          mdoc(issuer_auth=[cbor2.dumps([1, -7]), {33: der(control_cert)}, b"", b"\0" * 64]), "MdocError.cose.malformed")
mdoc_case("header", "issuerAuth tagged as COSE_Mac0 (17)",
          mdoc(issuer_auth=cbor2.CBORTag(17, sign1(b"x", control_key, unprotected={33: der(control_cert)}))), "MdocError.cose.unexpectedTag")
mdoc_case("header", "deviceMac alg HMAC 256/64", mdoc(mac=True, device_protected={1: 4}), "MdocError.deviceAuthenticationFailed.algorithmKeyMismatch",
          mac=True)
mdoc_case("header", "deviceSignature alg EdDSA over a P-256 key", mdoc(device_protected={1: -8}),
          "MdocError.deviceAuthenticationFailed.algorithmKeyMismatch")
mdoc_case("header", "deviceMac without the reader key (no EMacKey)", mdoc(mac=True), "MdocError.macKeyUnavailable")

# --- response status and structure ------------------------------------------------------
for status in [10, 11, 12, 1, 20]:
    mdoc_case("status", f"status {status} with a valid document", mdoc(status=status), "MdocError.responseStatusNotOK")
mdoc_case("status", "status 0 and no documents", mdoc(documents=False), "MdocError.noDocumentsReturned")
mdoc_case("status", "status 0, only documentErrors",
          mdoc(documents=False, response_changes=lambda r: r.update(documentErrors=[{MDL: 0}])), "MdocError.noDocumentsReturned")
mdoc_case("status", "status 0 and an empty documents array", mdoc(response_changes=lambda r: r.update(documents=[])),
          "MdocError.noDocumentsReturned")
mdoc_case("status", "version 2.0", mdoc(response_changes=lambda r: r.update(version="2.0")), "MdocError.unsupportedVersion")
mdoc_case("status", "status missing", mdoc(response_changes=lambda r: r.pop("status")), "MdocError.malformed")
mdoc_case("status", "status negative", mdoc(response_changes=lambda r: r.update(status=-1)), "MdocError.malformed")
mdoc_case("status", "documents is a map", mdoc(response_changes=lambda r: r.update(documents={})), "MdocError.malformed")
mdoc_case("status", "document docType differs from the MSO's", mdoc(doc_type="org.iso.23220.photoid.1"), "MdocError.docTypeMismatch")
mdoc_case("status", "deviceAuth with both signature and MAC",
          mdoc(response_changes=lambda r: r["documents"][0]["deviceSigned"]["deviceAuth"].update(deviceMac=[b"", {}, None, b"\0" * 32])),
          "MdocError.missingDeviceAuthentication")

# --- tampering --------------------------------------------------------------------------
def change_value(items):
    item = cbor2.loads(items[0].value)
    item["elementValue"] = "Mallory"
    items[0] = tag24(item)


def change_id(items):
    item = cbor2.loads(items[0].value)
    item["digestID"] = 999
    items[0] = tag24(item)


def duplicate_item(items):
    items.append(items[0])


def reencode_item(items):
    # Same value, non-preferred encoding of digestID: other bytes, so another digest.
    item = cbor2.loads(items[0].value)
    body = cbor2.dumps(item)
    items[0] = cbor2.CBORTag(24, body.replace(b"\x68digestID\x00", b"\x68digestID\x18\x00", 1))


mdoc_case("tamper", "an element value changed", mdoc(item_changes=change_value), "MdocError.digestMismatch")
mdoc_case("tamper", "an element's digestID not in the MSO", mdoc(item_changes=change_id), "MdocError.unknownDigestID")
mdoc_case("tamper", "the same element twice", mdoc(item_changes=duplicate_item), "MdocError.duplicateDigestID")
mdoc_case("tamper", "an element re-encoded with the same meaning", mdoc(item_changes=reencode_item), "MdocError.digestMismatch")
mdoc_case("tamper", "digest algorithm SHA-1", mdoc(mso_changes=lambda m: m.update(digestAlgorithm="SHA-1")), "MdocError.unsupportedDigestAlgorithm")
mdoc_case("tamper", "valueDigests without the namespace", mdoc(mso_changes=lambda m: m.update(valueDigests={})), "MdocError.unknownDigestID")
mdoc_case("tamper", "device signature over another session transcript",
          mdoc(transcript=[TRANSCRIPT[0], tag24(cose_key(ec.generate_private_key(ec.SECP256R1()))), None]),
          "MdocError.deviceAuthenticationFailed.invalidSignature")
mdoc_case("tamper", "device signature by a key other than the MSO's", mdoc(device_signer=ec.generate_private_key(ec.SECP256R1())),
          "MdocError.deviceAuthenticationFailed.invalidSignature")
mdoc_case("tamper", "device-signed elements the MSO does not authorize", mdoc(device_name_spaces={NS: {"family_name": "Mallory"}}),
          "MdocError.notAuthorizedByKeyAuthorizations")
good = cbor2.loads(mdoc())
auth = good["documents"][0]["issuerSigned"]["issuerAuth"]
auth[3] = bytes([auth[3][0] ^ 1]) + auth[3][1:]
mdoc_case("tamper", "issuerAuth signature bit flipped", cbor2.dumps(good), "MdocError.issuerSignatureInvalid.invalidSignature")
good = cbor2.loads(mdoc())
auth = good["documents"][0]["issuerSigned"]["issuerAuth"]
mso = cbor2.loads(cbor2.loads(auth[2]).value)
auth[2] = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(mso, canonical=True)))
mdoc_case("tamper", "MSO re-encoded canonically under the original signature", cbor2.dumps(good),
          "MdocError.issuerSignatureInvalid.invalidSignature")
good = cbor2.loads(mdoc())
good["documents"][0]["issuerSigned"]["issuerAuth"][3] = good["documents"][0]["issuerSigned"]["issuerAuth"][3][:60]
mdoc_case("tamper", "issuerAuth signature truncated", cbor2.dumps(good), "MdocError.issuerSignatureInvalid.invalidSignatureLength")
good = cbor2.loads(mdoc(mac=True))
good["documents"][0]["deviceSigned"]["deviceAuth"]["deviceMac"][3] = b"\0" * 32
mdoc_case("tamper", "deviceMac tag replaced", cbor2.dumps(good), "MdocError.deviceAuthenticationFailed.invalidMAC", mac=True)
def non_preferred_mso(mso):
    # "version" as a text string with a one-byte length argument (78 07): not preferred
    # serialization, but what this issuer signed.
    mso["_bytes"] = cbor2.dumps({k: v for k, v in mso.items() if k != "_bytes"}).replace(b"\x67version", b"\x78\x07version", 1)


def mdoc_with_exact_mso(**kwargs):
    holder = {}
    original = kwargs.pop("mso_changes", None)

    def capture(mso):
        if original:
            original(mso)
        non_preferred_mso(mso)
        holder["bytes"] = mso.pop("_bytes")
    return mdoc(mso_changes=capture, mso_bytes_from=holder, **kwargs)


mdoc_case("control", "an MSO in non-preferred CBOR, signed as such, verifies from its exact bytes", mdoc_with_exact_mso(), None)

# --- mdoc time edges --------------------------------------------------------------------
mdoc_case("time", "MSO validUntil yesterday", mdoc(validity=(days(-10), days(-1)), signed=days(-10)), "MdocError.msoExpired")
mdoc_case("time", "MSO validFrom tomorrow", mdoc(validity=(days(1), days(10))), "MdocError.msoNotYetValid")
mdoc_case("time", "verification after the DS certificate's end (--at)", mdoc(), "MdocError.untrustedIssuer.expired",
          at=(datetime.datetime.now(UTC) + datetime.timedelta(days=400)).strftime("%Y-%m-%dT%H:%M:%SZ"))
mdoc_case("time", "verification before the IACA's start (--at)", mdoc(), "MdocError.untrustedIssuer.notYetValid",
          at=(datetime.datetime.now(UTC) - datetime.timedelta(days=400)).strftime("%Y-%m-%dT%H:%M:%SZ"))
mdoc_case("time", "MSO signed long before the DS certificate existed", mdoc(signed=days(-365)), "MdocError.untrustedIssuer.notValidAt")
mdoc_case("time", "validityInfo.signed not a date", mdoc(mso_changes=lambda m: m["validityInfo"].update(signed="yesterday")),
          "MdocError.malformed")
mdoc_case("time", "validityInfo.validUntil a tdate that is not RFC 3339",
          mdoc(mso_changes=lambda m: m["validityInfo"].update(validUntil=cbor2.CBORTag(0, "tomorrow"))), "MdocError.malformed")

# ---------------------------------------------------------------------------------------
# Resource exhaustion and malformed CBOR (wallet inspect, wallet mdoc verify)

def be32(value):
    return struct.pack(">I", value)


def inspect(cls, label, data, identifier, *flags):
    expect(cls, label, ["inspect", path("input.bin", data), *flags], identifier)


lengths = [5 + (8 << 20)]
for _ in range(120):
    lengths.append(7 + lengths[-1])
nested = b"".join(b"\xd8\x18\x5a" + be32(lengths[level - 1]) for level in range(120, 0, -1)) \
    + b"\x5a" + be32(8 << 20) + b"\xab" * (8 << 20)
started = time.monotonic()
inspect("control", "8 MiB of nested tag-24 byte strings is shown (linear work)", nested, None, "--compact")
checks.check("[exhaustion] inspecting 8 MiB of nested tag-24 took under 60 s (hang guard, not a benchmark)",
             time.monotonic() - started < 60)
keys = (b"\xb1" + b"".join(bytes([k, 0]) for k in range(16))) * 120 + b"\x5a" + be32(1 << 20) + b"\x00" * (1 << 20) + b"\x00" * 120
inspect("control", "maps whose keys nest 120 maps deep are shown (linear work)", keys, None, "--compact")
deep_pretty = b"\x81" * 200 + b"\x9a" + be32(400_000) + b"\x01" * 400_000
inspect("exhaustion", "pretty-printing 200-deep nesting of 400,000 items (indentation amplification)", deep_pretty,
        "InspectionError.workLimitExceeded")
inspect("control", "the same input on one line", deep_pretty, None, "--compact")
inspect("exhaustion", "100,000 nested arrays", b"\x81" * 100_000 + b"\x00", "InspectionError.notRecognized.depthLimitExceeded")
inspect("exhaustion", "100,000 nested tags", b"\xc1" * 100_000 + b"\x00", "InspectionError.notRecognized.depthLimitExceeded")
inspect("exhaustion", "an array claiming 2^63 elements", b"\x9b\x7f" + b"\xff" * 7, "InspectionError.notRecognized.lengthTooLarge")
inspect("exhaustion", "a byte string claiming 4 GiB", b"\x5a\xff\xff\xff\xff" + b"\x00" * 16, "InspectionError.notRecognized.lengthTooLarge")
inspect("exhaustion", "a map claiming 2^32 entries", b"\xba\xff\xff\xff\xff\x00\x00", "InspectionError.notRecognized.lengthTooLarge")
inspect("exhaustion", "an indefinite array without a break", b"\x9f" + b"\x01" * 1000, "InspectionError.notRecognized.unexpectedEnd")
inspect("exhaustion", "5 million one-byte items", b"\x9a" + be32(5_000_000) + b"\x00" * 5_000_000, "InspectionError.notRecognized.itemLimitExceeded")
inspect("malformed", "reserved additional information 28", b"\x1c", "InspectionError.notRecognized.reservedAdditionalInfo")
inspect("malformed", "text that is not UTF-8", b"\x62\xc3\x28", "InspectionError.notRecognized.invalidUTF8")
inspect("malformed", "a break outside an indefinite item", b"\x82\x01\xff", "InspectionError.notRecognized.unexpectedBreak")
inspect("malformed", "two-byte simple value below 32", b"\xf8\x10", "InspectionError.notRecognized.invalidSimpleValue")
inspect("malformed", "a repeated map key", b"\xa2\x01\x02\x01\x03", "InspectionError.notRecognized.duplicateMapKey")
nested_key = b"\x01"
for _ in range(50):
    nested_key = b"\xa1" + nested_key + b"\x01"   # {nested_key: 1}: the map is the next level's key
inspect("malformed", "a repeated map key that nests 50 maps as keys", b"\xa2" + nested_key + b"\x00" + nested_key + b"\x00",
        "InspectionError.notRecognized.duplicateMapKey")
inspect("malformed", "a definite string chunk type mismatch in an indefinite string", b"\x5f\x61\x61\xff",
        "InspectionError.notRecognized.invalidIndefiniteChunk")
inspect("malformed", "indefinite-length unsigned integer", b"\x1f", "InspectionError.notRecognized.invalidIndefiniteLength")
inspect("malformed", "a PEM block with bad base64", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        "InspectionError.unreadablePEM")
mdoc_case("exhaustion", "a DeviceResponse nested 10,000 arrays deep", b"\xa1\x67version" + b"\x81" * 10_000 + b"\x00",
          "MdocError.cbor.depthLimitExceeded")
mdoc_case("exhaustion", "a DeviceResponse with trailing bytes", mdoc() + b"\x00", "MdocError.cbor.trailingBytes")
mdoc_case("exhaustion", "a DeviceResponse whose document claims a 4 GiB byte string",
          b"\xa2\x67version\x631.0\x69documents\x81\x5a\xff\xff\xff\xff", "MdocError.cbor.lengthTooLarge")

checks.finish()
