#!/usr/bin/env python3
"""Drives `wallet present` against an OpenID4VP verifier written here, on a loopback port,
and checks what the wallet sends with independent implementations:

- the SD-JWT VC presentation with the IETF/OWF reference verifier (PyPI `sd-jwt`),
  including its KB-JWT checks (aud = the full client_id, or origin:<origin>; nonce);
- the mdoc DeviceResponse with cbor2 + pycose + cryptography, over an OpenID4VP
  SessionTranscript built here from the request (OpenID4VP 1.0 App. B.2.6);
- the direct_post.jwt / dc_api.jwt response decrypted with jwcrypto.

The credentials are minted outside the SDK's presentation code: the SD-JWT VC by the
reference issuer, the mdoc with keys and certificates made here (signed through
`wallet interop mdoc issue`). Requests are signed here with jwcrypto under a reader PKI
made with pyca/cryptography. Holder keys live in the wallet's store
(`wallet interop vp holder-key` / `add`, Sources/wallet/Interop/PresentationInteropCommand.swift).
"""
import base64
import datetime
import hashlib
import http.server
import json
import os
import tempfile
import threading
import urllib.parse

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from jwcrypto import jwe, jwk, jws
from pycose.keys import EC2Key
from pycose.keys.curves import P256
from pycose.messages import Sign1Message
from sd_jwt.common import SDObj
from sd_jwt.issuer import SDJWTIssuer
from sd_jwt.verifier import SDJWTVerifier

from interop_common import Checks, run_wallet
from mdoc_pki import make_pki

checks = Checks("vp/OpenID4VP verifier (sd-jwt, cbor2+pycose, jwcrypto)")
PID = "https://credentials.example.com/identity_credential"
MDL = "org.iso.18013.5.1.mDL"
NS = "org.iso.18013.5.1"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def tag24(value):
    return cbor2.CBORTag(24, cbor2.dumps(value))


# --- A reader PKI and request signing, independent of the SDK ------------------------------

def reader_pki(host):
    now = datetime.datetime.now(datetime.timezone.utc)
    root_key = ec.generate_private_key(ec.SECP256R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Interop Reader Root")])
    leaf_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Interop Verifier")])
    root = (x509.CertificateBuilder().subject_name(root_name).issuer_name(root_name).public_key(root_key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(root_key.public_key()), critical=False)
            .sign(root_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(leaf_name).issuer_name(root_name).public_key(leaf_key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()), critical=False)
            .sign(root_key, hashes.SHA256()))
    return root, leaf, leaf_key


def sign_request(payload, leaf, leaf_key, typ="oauth-authz-req+jwt"):
    key = jwk.JWK.from_pem(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    token = jws.JWS(json.dumps(payload).encode())
    header = {"alg": "ES256", "x5c": [base64.b64encode(leaf.public_bytes(serialization.Encoding.DER)).decode()]}
    if typ:
        header["typ"] = typ
    token.add_signature(key, None, json.dumps(header))
    return token.serialize(compact=True)


# --- The verifier's HTTP side ----------------------------------------------------------------

class Verifier:
    """Serves request objects at /request/<name> (GET or POST, echoing wallet_nonce) and
    records what arrives at /post."""

    def __init__(self):
        self.objects = {}     # name -> function(wallet_nonce) -> compact JWS
        self.fetches = []     # (method, form)
        self.posts = []       # form dicts
        verifier = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _form(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                return dict(urllib.parse.parse_qsl(body, keep_blank_values=True)), self.headers.get("Content-Type")

            def _answer(self, status, body, content_type):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _request_object(self, method):
                form, _ = self._form() if method == "POST" else ({}, None)
                verifier.fetches.append((method, form, self.headers.get("Accept")))
                make = verifier.objects.get(self.path.rsplit("/", 1)[-1])
                if not make:
                    return self._answer(404, "{}", "application/json")
                self._answer(200, make(form.get("wallet_nonce")), "application/oauth-authz-req+jwt")

            def do_GET(self):
                self._request_object("GET")

            def do_POST(self):
                if self.path.startswith("/request/"):
                    return self._request_object("POST")
                form, content_type = self._form()
                form["_content_type"] = content_type
                verifier.posts.append(form)
                self._answer(200, json.dumps({"redirect_uri": "https://verifier.example/done#code=xyz"}), "application/json")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


# --- Independent checks ------------------------------------------------------------------------

def session_transcript(handover_name, info):
    """OpenID4VP 1.0 App. B.2.6: [null, null, [name, sha256(cbor(info))]]."""
    return [None, None, [handover_name, hashlib.sha256(cbor2.dumps(info)).digest()]]


def verify_mdoc(entry, transcript, iaca):
    """ISO 18013-5 §9.3.1 reader checks with cbor2/pycose; returns the disclosed elements."""
    response = cbor2.loads(b64url_decode(entry))
    if response.get("status") != 0:
        raise ValueError("status")
    doc = response["documents"][0]
    auth = Sign1Message.from_cose_obj(doc["issuerSigned"]["issuerAuth"], allow_unknown_attributes=True)
    x5chain = next(v for k, v in auth.uhdr.items() if getattr(k, "identifier", k) == 33)
    ds = x509.load_der_x509_certificate(x5chain if isinstance(x5chain, bytes) else x5chain[0])
    iaca.public_key().verify(ds.signature, ds.tbs_certificate_bytes, ec.ECDSA(ds.signature_hash_algorithm))
    numbers = ds.public_key().public_numbers()
    auth.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
    if not auth.verify_signature():
        raise ValueError("issuer signature")
    mso = cbor2.loads(cbor2.loads(auth.payload).value)
    disclosed = {}
    for ns, items in doc["issuerSigned"].get("nameSpaces", {}).items():
        for item in items:
            decoded = cbor2.loads(item.value)
            if mso["valueDigests"][ns][decoded["digestID"]] != hashlib.sha256(cbor2.dumps(item)).digest():
                raise ValueError("digest")
            disclosed[decoded["elementIdentifier"]] = decoded["elementValue"]
    device_signed = doc["deviceSigned"]
    payload = cbor2.dumps(tag24(["DeviceAuthentication", transcript, doc["docType"], device_signed["nameSpaces"]]))
    message = Sign1Message.from_cose_obj(device_signed["deviceAuth"]["deviceSignature"], allow_unknown_attributes=True)
    message.payload = payload
    device_key = mso["deviceKeyInfo"]["deviceKey"]
    message.key = EC2Key(crv=P256, x=device_key[-2], y=device_key[-3])
    if not message.verify_signature():
        raise ValueError("device signature")
    return disclosed


def reference_verify(presentation, issuer_key, aud, nonce):
    try:
        return SDJWTVerifier(presentation, lambda iss, header: issuer_key, aud, nonce).get_verified_payload()
    except Exception as error:  # the reference raises plain exceptions
        return error


def decrypt(compact, key):
    token = jwe.JWE()
    token.deserialize(compact, key=key)
    return token.jose_header, json.loads(token.payload)


# --- The run -----------------------------------------------------------------------------------

def main():
    verifier = Verifier()
    with tempfile.TemporaryDirectory() as store:
        def wallet(*args):
            return run_wallet(*args, "--store", store)

        # Holder keys in the wallet; credentials minted outside the presentation code.
        status, out, err = wallet("interop", "vp", "holder-key")
        checks.check("the wallet makes a holder key for the SD-JWT VC", status == 0, err)
        pid_holder = json.loads(out)
        issuer_key = jwk.JWK.generate(kty="EC", crv="P-256")
        now = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
        claims = {"vct": PID, "iss": "https://issuer.example", "iat": now - 60, "exp": now + 86400,
                  SDObj("given_name"): "Erika", SDObj("family_name"): "Mustermann", SDObj("birthdate"): "1964-08-12"}
        issuance = SDJWTIssuer(claims, issuer_key, jwk.JWK(**pid_holder["jwk"]),
                               extra_header_parameters={"typ": "dc+sd-jwt"}).sd_jwt_issuance
        status, _, err = wallet("interop", "vp", "add", "--id", "pid-1", "--format", "dc+sd-jwt", "--type", PID,
                                "--key-alias", pid_holder["alias"], "--credential", issuance)
        checks.check("the reference issuer's SD-JWT VC goes into the store", status == 0, err)

        status, out, err = wallet("interop", "vp", "holder-key")
        mdl_holder = json.loads(out)
        iaca, ds, ds_key = make_pki("VP interop")
        elements = {NS: {"family_name": "Mustermann", "given_name": "Erika", "age_over_18": True,
                         "document_number": "T22000129"}}
        status, issued, err = run_wallet(
            "interop", "mdoc", "issue", "--issuer-key", ds_key.private_numbers().private_value.to_bytes(32, "big").hex(),
            "--issuer-cert", ds.public_bytes(serialization.Encoding.DER).hex(), "--device-pub", mdl_holder["sec1"],
            "--claims", cbor2.dumps(elements).hex())
        checks.check("an mDL for the wallet's device key is issued with keys made here", status == 0, err)
        status, _, err = wallet("interop", "vp", "add", "--id", "mdl-1", "--format", "mso_mdoc", "--type", MDL,
                                "--key-alias", mdl_holder["alias"], "--credential", issued)
        checks.check("the mDL goes into the store", status == 0, err)

        host = "127.0.0.1"
        root, leaf, leaf_key = reader_pki(host)
        anchor = os.path.join(store, "reader-root.pem")
        with open(anchor, "wb") as file:
            file.write(root.public_bytes(serialization.Encoding.PEM))
        response_uri = verifier.base + "/post"
        pid_query = {"credentials": [{"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": [PID]},
                                      "claims": [{"path": ["family_name"]}, {"path": ["birthdate"]}]}]}
        mdl_query = {"credentials": [{"id": "mdl", "format": "mso_mdoc", "meta": {"doctype_value": MDL},
                                      "claims": [{"path": [NS, "family_name"]}, {"path": [NS, "age_over_18"]}]}]}

        def request_uri(client_id, name, method=None):
            params = [("client_id", client_id), ("request_uri", f"{verifier.base}/request/{name}")]
            if method:
                params.append(("request_uri_method", method))
            return "openid4vp://?" + urllib.parse.urlencode(params)

        # 1. SD-JWT VC, x509_san_dns, request_uri_method=post, direct_post.
        client_id = "x509_san_dns:" + host
        nonce = b64url(os.urandom(16))

        def pid_object(wallet_nonce):
            payload = {"client_id": client_id, "response_type": "vp_token", "response_mode": "direct_post",
                       "response_uri": response_uri, "nonce": nonce, "state": "state-sd", "dcql_query": pid_query,
                       "aud": "https://self-issued.me/v2", "iat": now, "exp": now + 300}
            if wallet_nonce is not None:
                payload["wallet_nonce"] = wallet_nonce
            return sign_request(payload, leaf, leaf_key)
        verifier.objects["sd"] = pid_object
        status, out, err = wallet("present", request_uri(client_id, "sd", "post"), "--auto", "--json", "--allow-http",
                                  "--reader-anchor", anchor)
        result = json.loads(out) if out.startswith("{") else {}
        checks.check("wallet present completes the SD-JWT presentation", status == 0 and result.get("state") == "completed",
                     err or out)
        checks.check("the wallet reports the verifier trusted by the reader anchor",
                     result.get("verifier", {}).get("trusted") is True and result.get("verifier", {}).get("commonName") == "Interop Verifier",
                     out)
        method, form, accept = verifier.fetches[-1]
        checks.check("request_uri_method=post: a form POST with wallet_nonce and wallet_metadata, Accept oauth-authz-req+jwt",
                     method == "POST" and len(b64url_decode(form.get("wallet_nonce", ""))) >= 16
                     and "vp_formats_supported" in json.loads(form.get("wallet_metadata", "{}"))
                     and accept == "application/oauth-authz-req+jwt", str(form))
        post = verifier.posts[-1]
        checks.check("direct_post: a form with vp_token and the state",
                     post.get("_content_type") == "application/x-www-form-urlencoded" and post.get("state") == "state-sd", str(post))
        presentation = json.loads(post.get("vp_token", "{}")).get("pid", [""])[0]
        verified = reference_verify(presentation, issuer_key, client_id, nonce)
        checks.check("the reference verifier accepts the SD-JWT VC with its KB-JWT (aud = client_id, nonce)",
                     isinstance(verified, dict), repr(verified))
        if isinstance(verified, dict):
            checks.check("only the requested claims are disclosed",
                         verified.get("family_name") == "Mustermann" and verified.get("birthdate") == "1964-08-12"
                         and "given_name" not in verified, str(verified))
        checks.check("the reference verifier refuses the KB-JWT for another audience",
                     not isinstance(reference_verify(presentation, issuer_key, "x509_san_dns:evil.example", nonce), dict))
        checks.check("the reference verifier refuses the KB-JWT for another nonce",
                     not isinstance(reference_verify(presentation, issuer_key, client_id, "other-nonce"), dict))

        # 2. mdoc, x509_hash, direct_post.jwt with the verifier's ECDH-ES key.
        hash_id = "x509_hash:" + b64url(hashlib.sha256(leaf.public_bytes(serialization.Encoding.DER)).digest())
        enc_key = jwk.JWK.generate(kty="EC", crv="P-256", kid="verifier-enc", use="enc", alg="ECDH-ES")
        public_enc = json.loads(enc_key.export_public())
        mdoc_nonce = b64url(os.urandom(16))
        verifier.objects["mdoc"] = lambda _: sign_request(
            {"client_id": hash_id, "response_type": "vp_token", "response_mode": "direct_post.jwt",
             "response_uri": response_uri, "nonce": mdoc_nonce, "state": "state-mdoc", "dcql_query": mdl_query,
             "client_metadata": {"jwks": {"keys": [public_enc]}, "encrypted_response_enc_values_supported": ["A256GCM", "A128GCM"]}},
            leaf, leaf_key)
        status, out, err = wallet("present", request_uri(hash_id, "mdoc"), "--auto", "--allow-http", "--reader-anchor", anchor)
        checks.check("wallet present completes the mdoc presentation", status == 0 and out.startswith("completed"), err or out)
        post = verifier.posts[-1]
        checks.check("direct_post.jwt: only the response parameter is posted", set(post) == {"response", "_content_type"}, str(post))
        try:
            header, payload = decrypt(post["response"], enc_key)
            checks.check("jwcrypto decrypts the response: ECDH-ES, the strongest common enc, the key's kid",
                         header.get("alg") == "ECDH-ES" and header.get("enc") == "A256GCM" and header.get("kid") == "verifier-enc",
                         str(header))
            checks.check("the encrypted payload carries vp_token and state", payload.get("state") == "state-mdoc", str(payload))
            thumbprint = b64url_decode(enc_key.thumbprint())
            transcript = session_transcript("OpenID4VPHandover", [hash_id, mdoc_nonce, thumbprint, response_uri])
            disclosed = verify_mdoc(payload["vp_token"]["mdl"][0], transcript, iaca)
            checks.check("cbor2/pycose verify the DeviceResponse over the OpenID4VPHandover transcript (with the key thumbprint)",
                         disclosed == {"family_name": "Mustermann", "age_over_18": True}, str(disclosed))
            try:
                verify_mdoc(payload["vp_token"]["mdl"][0],
                            session_transcript("OpenID4VPHandover", [hash_id, mdoc_nonce, None, response_uri]), iaca)
                checks.check("the device signature does not verify without the thumbprint", False)
            except ValueError as error:
                checks.check("the device signature does not verify without the thumbprint", "device signature" in str(error))
        except Exception as error:  # noqa: BLE001 - any failure is a failed check
            checks.check("jwcrypto decrypts and cbor2/pycose verify the mdoc response", False, repr(error))

        # 3. Decline: the verifier hears access_denied.
        verifier.objects["decline"] = lambda _: sign_request(
            {"client_id": client_id, "response_type": "vp_token", "response_mode": "direct_post", "response_uri": response_uri,
             "nonce": nonce, "state": "state-decline", "dcql_query": pid_query}, leaf, leaf_key)
        status, out, err = wallet("present", request_uri(client_id, "decline"), "--decline", "--allow-http")
        post = verifier.posts[-1]
        checks.check("decline: the verifier receives access_denied with the state",
                     status == 0 and post.get("error") == "access_denied" and post.get("state") == "state-decline", str(post))

        # 4. A forged request (signed by another key under the same x5c) gets nothing.
        posts = len(verifier.posts)
        forger = ec.generate_private_key(ec.SECP256R1())
        verifier.objects["forged"] = lambda _: sign_request(
            {"client_id": client_id, "response_type": "vp_token", "response_mode": "direct_post", "response_uri": response_uri,
             "nonce": nonce, "dcql_query": pid_query}, leaf, forger)
        status, out, err = wallet("present", request_uri(client_id, "forged"), "--auto", "--json", "--allow-http",
                                  "--reader-anchor", anchor)
        checks.check("a request signed by another key is refused as not trusted, before consent",
                     status == 1 and json.loads(out or "{}").get("state") == "failed" and "not trusted" in json.loads(out or "{}").get("error", ""),
                     err or out)
        checks.check("nothing reaches the verifier for the forged request", len(verifier.posts) == posts)

        # 5. DC API, unsigned, mdoc: the origin-bound handover.
        origin = "https://rp.example"
        dc_nonce = b64url(os.urandom(16))
        request_file = os.path.join(store, "dc-request.json")
        with open(request_file, "w") as file:
            json.dump({"protocol": "openid4vp-v1-unsigned", "data": {
                "response_type": "vp_token", "response_mode": "dc_api", "nonce": dc_nonce, "dcql_query": mdl_query}}, file)
        status, out, err = wallet("present", "--dc-api", request_file, "--origin", origin, "--auto")
        try:
            data = json.loads(out)
            transcript = session_transcript("OpenID4VPDCAPIHandover", [origin, dc_nonce, None])
            disclosed = verify_mdoc(data["vp_token"]["mdl"][0], transcript, iaca)
            checks.check("DC API: cbor2/pycose verify the mdoc over the OpenID4VPDCAPIHandover with the origin",
                         status == 0 and disclosed.get("family_name") == "Mustermann", str(disclosed))
        except Exception as error:  # noqa: BLE001
            checks.check("DC API: cbor2/pycose verify the mdoc over the OpenID4VPDCAPIHandover with the origin", False,
                         repr(error) + err)

        # 6. DC API, signed, SD-JWT, dc_api.jwt: aud is origin:<origin>.
        dc_key = jwk.JWK.generate(kty="EC", crv="P-256", kid="dc-enc", alg="ECDH-ES")
        signed = sign_request({"client_id": client_id, "expected_origins": [origin], "response_type": "vp_token",
                               "response_mode": "dc_api.jwt", "nonce": dc_nonce, "dcql_query": pid_query,
                               "client_metadata": {"jwks": {"keys": [json.loads(dc_key.export_public())]}}}, leaf, leaf_key)
        with open(request_file, "w") as file:
            json.dump({"protocol": "openid4vp-v1-signed", "data": {"request": signed}}, file)
        status, out, err = wallet("present", "--dc-api", request_file, "--origin", origin, "--auto", "--reader-anchor", anchor)
        try:
            header, payload = decrypt(json.loads(out)["response"], dc_key)
            presentation = payload["vp_token"]["pid"][0]
            verified = reference_verify(presentation, issuer_key, "origin:" + origin, dc_nonce)
            checks.check("DC API: jwcrypto decrypts dc_api.jwt, the reference verifier accepts aud origin:<origin>",
                         isinstance(verified, dict) and header.get("kid") == "dc-enc", repr(verified))
        except Exception as error:  # noqa: BLE001
            checks.check("DC API: jwcrypto decrypts dc_api.jwt, the reference verifier accepts aud origin:<origin>", False,
                         repr(error) + err)
        status, out, err = wallet("present", "--dc-api", request_file, "--origin", "https://evil.example", "--auto",
                                  "--reader-anchor", anchor)
        checks.check("DC API: a signed request from an origin outside expected_origins is refused",
                     status == 1 and "originNotExpected" in err, err)
    verifier.server.shutdown()


main()
checks.finish()
