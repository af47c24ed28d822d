"""Interop: the `openid4vci` package (PyPI, eduTAP's Credential Issuer for OpenID4VCI 1.0)
issues to `wallet issue`.

The package serves the Credential Issuer endpoints through its FastAPI router
(metadata, nonce, credential, deferred credential, notification) and delegates the
decisions to a backend; its `InMemoryIssuerBackend` keeps nonces and deferred
transactions, its `InMemoryAuthorizationServer` runs the pre-authorized code grant,
`validate_jwt_proof` checks the wallet's key proofs, and its `SdJwtVcAdapter` and
`MdocAdapter` mint the credentials. This script is only the glue: a token endpoint
and an authorization server metadata document around its authorization server (the
router deliberately has neither), the JWT VC issuer metadata for the SD-JWT VC key,
and a `mint` callback that calls the package's proof validation and adapters.

Flows the package supports, each run here: the pre-authorized code with and without
a tx_code (given and asked); the token response's `credential_identifiers`, which the
wallet must use instead of the configuration id (every credential request is checked);
batches (`batch_credential_issuance`; the keys distinct, each credential bound to its
own, as the wallet stored it); key attestations in the proofs' `key_attestation` header
(`key_attestations_required`, checked by `validate_jwt_proof` against a wallet provider
made here); deferred issuance (202 from the credential endpoint, 202 again from the
deferred endpoint while the transaction stays open); notifications; both formats.

What the package cannot serve, and why (so these are not exercised here):
- the authorization code flow and PAR: absent by design ("half of an Authorization
  Server is worse than none", authorization.py);
- DPoP: the router reads `Authorization: Bearer` only (HTTPBearer), no DPoP proofs;
- encrypted requests/responses: the router parses JSON bodies only (`payload: dict`),
  so a compact-JWE Credential Request, which the wallet always sends when it asks for
  an encrypted response (OpenID4VCI 1.0 §10), is refused before the backend sees it;
- refresh tokens: `TokenResponse` has the field, but `InMemoryAuthorizationServer`
  issues none and redeems only the pre-authorized code grant (`unsupported_grant_type`
  otherwise), so `wallet reissue` has nothing to renew with;
- the legacy `issuance_pending` error: the package follows 1.0, where a pending deferred
  transaction is a 202 with its `transaction_id` (its `DeferredCredentialErrorCode`
  has only `invalid_transaction_id`);
- the `attestation` proof type (App. F.3, `validate_attestation_proof`): the wallet
  proves possession with `jwt` proofs and puts the attestation in their header.
Two defects of the package (1.0.0a1) the glue works around, each noted where it does:
- its Token Response drops `"type": "openid_credential"` from `authorization_details`
  (the model's default is left out by `to_dict()`); the wallet takes a typeless entry
  that binds identifiers as `openid_credential`, so nothing is patched for it;
- `validate_key_attestation` decodes the attestation with joserfc's default registry,
  whose 512-byte header limit no `x5c` certificate fits under (the package raised the
  limit for proofs, MAX_PROOF_HEADER_LENGTH, for the same reason, but not here), so the
  glue raises that default to the package's own limit while it validates attested proofs.
Its models insist on https for the Credential Issuer Identifier and every endpoint
(models/common.py, models/metadata.py), while the wallet's Linux HTTP client
(URLSession over libcurl) cannot be pointed at a test CA. So the issuer runs on
loopback http (the wallet's --allow-http), the metadata is built with pydantic's
`model_construct` (no URL validation) and the offer's `credential_issuer`, made by the
package's `offer()` for an https identifier, is replaced by the loopback URL.
"""
import asyncio
import base64
import datetime
import json
import os
import socket
import tempfile
import threading
import time
import urllib.parse

import contextlib

import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from joserfc.jwk import ECKey
from pycose.keys import EC2Key

from openid4vci.adapters.mdoc import LocalCoseSigner, MdocAdapter
from openid4vci.adapters.sd_jwt_vc import SdJwtVcAdapter
from openid4vci.authorization import InMemoryAuthorizationServer, TokenError
from joserfc._rfc7515.registry import default_registry as jws_default_registry
from openid4vci.crypto.proofs import MAX_PROOF_HEADER_LENGTH, validate_jwt_proof
from openid4vci.crypto.signer import LocalJwsSigner
from openid4vci.exceptions import CredentialRequestError
from openid4vci.models.credential import CredentialErrorCode, CredentialResponse, IssuedCredential
from openid4vci.models.metadata import (BatchCredentialIssuance, CredentialConfiguration, CredentialIssuerMetadata,
                                        IssuerDisplay)
from openid4vci.models.oauth import TokenRequest
from openid4vci.reference import InMemoryIssuerBackend
from openid4vci.server_fastapi.app import create_router

from interop_common import Checks, run_wallet

VCT = "https://credentials.example/identity_credential"
DOCTYPE = "org.iso.18013.5.1.mDL"
BATCH = 5
ATTESTED = "identity_attested"
KEY_STORAGE = ["iso_18045_basic"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def payload_of(jwt):
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def key_id(jwk):
    """An EC public JWK by its RFC 7638 thumbprint members."""
    return (jwk.get("kty"), jwk.get("crv"), jwk.get("x"), jwk.get("y"))


def certificate(subject, key, issuer_name, issuer_key, ca, now):
    builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                            encipher_only=False, decipher_only=False), critical=True))
    return builder.sign(issuer_key, hashes.SHA256())


@contextlib.contextmanager
def attestation_header_limit():
    """joserfc's default JWS header limit raised to the package's proof limit, for the
    attestation inside a proof (see the module docstring), and restored after."""
    saved = jws_default_registry.max_header_length
    jws_default_registry.max_header_length = MAX_PROOF_HEADER_LENGTH
    try:
        yield
    finally:
        jws_default_registry.max_header_length = saved


class WalletProvider:
    """A wallet provider made here: a root the issuer trusts, and a leaf certificate with
    its key, written as the PEM files `wallet issue --key-attestation-key/-chain` read."""

    def __init__(self, directory, name):
        now = datetime.datetime.now(datetime.timezone.utc)
        root_key = ec.generate_private_key(ec.SECP256R1())
        self.root = certificate(f"{name} root", root_key, f"{name} root", root_key, True, now)
        leaf_key = ec.generate_private_key(ec.SECP256R1())
        leaf = certificate(f"{name} key attestation", leaf_key, f"{name} root", root_key, False, now)
        self.key_path = os.path.join(directory, f"{name}-key.pem")
        self.chain_path = os.path.join(directory, f"{name}-chain.pem")
        with open(self.key_path, "wb") as file:
            file.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
        with open(self.chain_path, "wb") as file:
            file.write(leaf.public_bytes(serialization.Encoding.PEM))

    def options(self):
        return ["--key-attestation-key", self.key_path, "--key-attestation-chain", self.chain_path]


class Issuer:
    """The package's issuer on a loopback port, with the glue around it."""

    def __init__(self):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.jws_key = ECKey.generate_key("P-256", parameters={"kid": "issuer-key-1"})
        self.sd_jwt = SdJwtVcAdapter(vct=VCT, signer=LocalJwsSigner(self.jws_key), issuer=self.base,
                                     always_visible=("iat", "exp"))
        private = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "openid4vci interop document signer")])
        certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                       .public_key(private.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                       .sign(private, hashes.SHA256()))
        numbers = private.private_numbers()
        cose_key = EC2Key(crv="P_256", d=numbers.private_value.to_bytes(32, "big"),
                          x=numbers.public_numbers.x.to_bytes(32, "big"), y=numbers.public_numbers.y.to_bytes(32, "big"))
        self.mdoc = MdocAdapter(doctype=DOCTYPE, signer=LocalCoseSigner(cose_key, [certificate.public_bytes(serialization.Encoding.DER)]))
        self.defer_next = False
        self.pending_polls = 0          # deferred polls answered "still pending" (202) first
        self.requests = []              # what each credential request asked for and proved
        self.token_identifiers = {}     # access token -> the token response's credential_identifiers
        self.provider_root = None       # the wallet provider root key attestations must chain to
        self.metadata = self.build_metadata()
        self.backend = InMemoryIssuerBackend(self.metadata, self.mint)
        # The package's AS writes its identifier into offers, and refuses a non-https one.
        self.auth = InMemoryAuthorizationServer("https://issuer.invalid")

    def build_metadata(self):
        proof = {"jwt": {"proof_signing_alg_values_supported": ["ES256"]}}
        document = {
            "credential_issuer": self.base,
            "credential_endpoint": self.base + "/credential",
            "nonce_endpoint": self.base + "/nonce",
            "deferred_credential_endpoint": self.base + "/deferred_credential",
            "notification_endpoint": self.base + "/notification",
            "batch_credential_issuance": BatchCredentialIssuance.model_validate({"batch_size": BATCH}),
            "display": [IssuerDisplay.model_validate({"name": "openid4vci (PyPI) interop issuer", "locale": "en"})],
            "credential_configurations_supported": {
                "identity_sd_jwt": CredentialConfiguration.model_validate({
                    **self.sd_jwt.metadata_fragment(), "cryptographic_binding_methods_supported": ["jwk"],
                    "proof_types_supported": proof, "credential_metadata": {"display": [{"name": "Identity", "locale": "en"}]}}),
                "mdl": CredentialConfiguration.model_validate({
                    **self.mdoc.metadata_fragment(), "cryptographic_binding_methods_supported": ["cose_key"],
                    "proof_types_supported": proof}),
                ATTESTED: CredentialConfiguration.model_validate({
                    **self.sd_jwt.metadata_fragment(), "cryptographic_binding_methods_supported": ["jwk"],
                    "proof_types_supported": {"jwt": {"proof_signing_alg_values_supported": ["ES256"],
                                                      "key_attestations_required": {"key_storage": KEY_STORAGE}}},
                    "credential_metadata": {"display": [{"name": "Identity (attested keys)", "locale": "en"}]}}),
            },
        }
        # The nested parts are validated by the package; only the top level, whose URL
        # checks demand https, is constructed without validation (see the module docstring).
        return CredentialIssuerMetadata.model_construct(**document)

    def configuration_of(self, request, grant):
        if request.credential_configuration_id:
            return request.credential_configuration_id
        for configuration, identifiers in grant.credential_identifiers.items():
            if request.credential_identifier in identifiers:
                return configuration
        raise CredentialRequestError(CredentialErrorCode.UNKNOWN_CREDENTIAL_IDENTIFIER, "not granted")

    def provider_key(self, header):
        """The `attestation_resolve_key` of `validate_jwt_proof`: the x5c leaf's key, once
        the chain leads to the wallet provider root (the package leaves that decision here)."""
        chain = [x509.load_der_x509_certificate(base64.b64decode(entry)) for entry in header.get("x5c") or []]
        if not chain or self.provider_root is None:
            raise CredentialRequestError(CredentialErrorCode.INVALID_PROOF, "the key attestation has no x5c")
        try:
            for child, parent in zip(chain, chain[1:] + [self.provider_root]):
                child.verify_directly_issued_by(parent)
        except Exception as error:
            raise CredentialRequestError(CredentialErrorCode.INVALID_PROOF,
                                         f"the key attestation chain does not lead to the wallet provider: {error}")
        return ECKey.import_key(chain[0].public_key().public_bytes(serialization.Encoding.PEM,
                                                                   serialization.PublicFormat.SubjectPublicKeyInfo))

    async def mint(self, request, context):
        grant = self.auth.grant_for(getattr(context, "access_token", ""))
        if grant is None:
            raise CredentialRequestError(CredentialErrorCode.CREDENTIAL_REQUEST_DENIED, "unknown access token")
        if isinstance(request, dict):      # a deferred transaction's stored payload
            if request["pending"] > 0:     # still pending: the same transaction_id, 202 again
                request["pending"] -= 1
                return CredentialResponse(transaction_id=request["transaction_id"], interval=1)
            keys, configuration = request["keys"], request["configuration"]
        else:
            configuration = self.configuration_of(request, grant)
            record = {"credential_identifier": request.credential_identifier,
                      "credential_configuration_id": request.credential_configuration_id,
                      "configuration": configuration,
                      "granted": self.token_identifiers.get(getattr(context, "access_token", ""), {}).get(configuration, []),
                      "keys": [], "attestations": []}
            self.requests.append(record)
            proofs = (request.proofs or {}).get("jwt") or []
            if not proofs or len(proofs) > BATCH:
                raise CredentialRequestError(CredentialErrorCode.INVALID_PROOF, "1 to %d jwt proofs" % BATCH)
            nonce = payload_of(proofs[0]).get("nonce")
            if not nonce or not self.backend.nonces.consume(nonce):
                raise CredentialRequestError(CredentialErrorCode.INVALID_NONCE, "fetch a fresh c_nonce")
            attested = configuration == ATTESTED
            with attestation_header_limit() if attested else contextlib.nullcontext():
                results = [validate_jwt_proof(p, credential_issuer=self.base, c_nonce=nonce, supported_algorithms=["ES256"],
                                              attestation_resolve_key=self.provider_key,
                                              required_key_storage=KEY_STORAGE if attested else None) for p in proofs]
            # The package checks an attestation that is there; requiring one is the issuer's call.
            if attested and any(result.attestation is None for result in results):
                raise CredentialRequestError(CredentialErrorCode.INVALID_PROOF, "this configuration requires key attestations")
            keys = [result.bound_key for result in results]
            record["keys"] = keys
            record["attestations"] = [result.attestation for result in results]
            if self.defer_next:
                self.defer_next = False
                payload = {"keys": keys, "configuration": configuration, "pending": self.pending_polls}
                payload["transaction_id"] = self.backend.transactions.open(payload)
                return CredentialResponse(transaction_id=payload["transaction_id"], interval=1)
        credentials = []
        for key in keys:
            if configuration == "mdl":
                issued = await self.mdoc.issue({"org.iso.18013.5.1": {"family_name": "Musterfrau", "age_over_18": True}},
                                               holder_key=key)
            else:
                now = int(time.time())
                issued = await self.sd_jwt.issue({"given_name": "Erika", "family_name": "Mustermann", "iat": now,
                                                  "exp": now + 86400}, holder_key=key)
            credentials.append(IssuedCredential(credential=issued))
        return CredentialResponse(credentials=credentials, notification_id=f"n-{len(self.backend.notifications)}-{time.time()}")

    def app(self):
        app = FastAPI()
        app.include_router(create_router(self.backend))

        @app.get("/.well-known/oauth-authorization-server")
        async def server_metadata():
            return {"issuer": self.base, "token_endpoint": self.base + "/token",
                    "pre-authorized_grant_anonymous_access_supported": True}

        @app.get("/.well-known/jwt-vc-issuer")
        async def jwt_vc_issuer():
            return {"issuer": self.base, "jwks": {"keys": [self.jws_key.as_dict(private=False)]}}

        @app.post("/token")
        async def token(request: Request):
            form = dict(urllib.parse.parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True))
            try:
                answer = self.auth.redeem(TokenRequest.model_validate(form))
            except TokenError as error:
                return JSONResponse({"error": error.code.value, "error_description": error.description}, status_code=400)
            except ValueError as error:
                return JSONResponse({"error": "invalid_request", "error_description": str(error)}, status_code=400)
            self.token_identifiers[answer.access_token] = {
                detail.credential_configuration_id: detail.credential_identifiers for detail in answer.authorization_details or []}
            return JSONResponse(answer.to_dict(), headers={"Cache-Control": "no-store"})

        return app

    def offer(self, configuration, tx_code=None):
        offer, _ = self.auth.offer("erika", [configuration], tx_code=tx_code, tx_code_description="sent by SMS")
        document = offer.to_dict()
        document["credential_issuer"] = self.base
        return json.dumps(document)

    def start(self):
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        thread = threading.Thread(target=self.server.run, daemon=True)
        thread.start()
        for _ in range(200):
            if self.server.started:
                return
            time.sleep(0.05)
        raise SystemExit("the openid4vci issuer did not start")

    def stop(self):
        self.server.should_exit = True


def wallet(store, *args, stdin=None):
    code, out, err = run_wallet(*args, "--store", store, "--allow-http", "--json", stdin=stdin)
    try:
        return code, json.loads(out) if out else None, err
    except json.JSONDecodeError:
        return code, None, err + out


def main():
    checks = Checks("openid4vci issuer -> wallet issue")
    issuer = Issuer()
    issuer.start()
    store = tempfile.mkdtemp(prefix="vci-interop-")
    try:
        # Pre-authorized, tx_code given up front; the token response's credential_identifiers are used.
        code, result, err = wallet(store, "issue", issuer.offer("identity_sd_jwt", tx_code="493536"), "--tx-code", "493536")
        checks.check("pre-authorized with tx_code: completed", code == 0 and result and result.get("state") == "completed", err)
        issued = (result or {}).get("issued", [])
        first = issuer.requests[-1] if issuer.requests else {}
        checks.check("credential_identifiers: the request names the one the token response granted, not the configuration",
                     bool(first.get("granted")) and first.get("credential_identifier") in first["granted"]
                     and first.get("credential_configuration_id") is None, str(first))
        code, listed, err = wallet(store, "credentials")
        entry = next((c for c in listed or [] if issued and c["id"] == issued[0]), None)
        checks.check("the SD-JWT VC is stored with its vct and issuer", entry is not None and entry["type"] == VCT
                     and entry["issuer"] == issuer.base and entry["format"] == "dc+sd-jwt", str(listed))
        code, shown, err = wallet(store, "credentials", "show", issued[0] if issued else "-")
        checks.check("its claims read back", code == 0 and (shown or {}).get("claims", {}).get("given_name") == "Erika", err)
        checks.check("credential_accepted reached the issuer",
                     any(n.event.value == "credential_accepted" if hasattr(n.event, "value") else n.event == "credential_accepted"
                         for n in issuer.backend.notifications), str(issuer.backend.notifications))

        # Pre-authorized, tx_code asked on the terminal.
        code, result, err = wallet(store, "issue", issuer.offer("identity_sd_jwt", tx_code="2468"), stdin="2468\n")
        checks.check("pre-authorized with tx_code asked: completed", code == 0 and (result or {}).get("state") == "completed", err)

        # A wrong tx_code: the package's invalid_grant, nothing stored.
        before = len(wallet(store, "credentials")[1] or [])
        code, result, err = wallet(store, "issue", issuer.offer("identity_sd_jwt", tx_code="1111"), "--tx-code", "9999")
        checks.check("a wrong tx_code fails with invalid_grant", code == 1 and (result or {}).get("error") == "authorizationFailed"
                     and "invalid_grant" in (result or {}).get("detail", ""), str(result) + err)
        checks.check("nothing is stored after the failure", len(wallet(store, "credentials")[1] or []) == before)

        # A batch of 5 one-time instances.
        code, result, err = wallet(store, "issue", issuer.offer("identity_sd_jwt"), "--batch", "5", "--one-time")
        checks.check("batch of 5: completed", code == 0 and (result or {}).get("state") == "completed", err)
        listed = wallet(store, "credentials")[1] or []
        batch = next((c for c in listed if result and c["id"] in result.get("issued", [])), {})
        checks.check("batch of 5: five unused instances", batch.get("remaining") == 5 and batch.get("use") == "one_time", str(batch))
        proof_keys = [key_id(key) for key in issuer.requests[-1]["keys"]] if issuer.requests else []
        checks.check("batch of 5: five proofs by five distinct keys (validate_jwt_proof)",
                     len(proof_keys) == 5 and len(set(proof_keys)) == 5, str(proof_keys))
        shown = wallet(store, "credentials", "show", batch.get("id", "-"))[1] or {}
        instances = shown.get("instanceKeys") or []
        checks.check("batch of 5: each stored instance's holder key is the key its own credential binds (cnf)",
                     len(instances) == 5 and all(entry.get("holderKey") and entry.get("boundKey")
                                                 and key_id(entry["holderKey"]) == key_id(entry["boundKey"]) for entry in instances),
                     str(instances))
        checks.check("batch of 5: the stored holder keys are exactly the five proof keys",
                     sorted(key_id(entry.get("holderKey") or {}) for entry in instances) == sorted(proof_keys))

        # mdoc.
        code, result, err = wallet(store, "issue", issuer.offer("mdl"), "--batch", "2")
        checks.check("mdoc: completed", code == 0 and (result or {}).get("state") == "completed", err)
        mdoc_id = (result or {}).get("issued", ["-"])[0]
        code, shown, err = wallet(store, "credentials", "show", mdoc_id)
        checks.check("mdoc: docType and elements read back", (shown or {}).get("type") == DOCTYPE
                     and (shown or {}).get("claims", {}).get("org.iso.18013.5.1", {}).get("family_name") == "Musterfrau", str(shown))
        instances = (shown or {}).get("instanceKeys") or []
        mdoc_keys = [key_id(key) for key in issuer.requests[-1]["keys"]] if issuer.requests else []
        checks.check("mdoc: two distinct proof keys, each stored instance bound to its own (MSO deviceKey)",
                     len(set(mdoc_keys)) == 2 and len(instances) == 2
                     and all(key_id(entry.get("holderKey") or {}) == key_id(entry.get("boundKey") or {}) for entry in instances)
                     and sorted(key_id(entry.get("holderKey") or {}) for entry in instances) == sorted(mdoc_keys), str(instances))

        # Key attestation: a configuration with key_attestations_required; the wallet signs
        # one as the wallet provider made here, and the package's validate_jwt_proof checks it.
        provider = WalletProvider(store, "provider")
        issuer.provider_root = provider.root
        code, result, err = wallet(store, "issue", issuer.offer(ATTESTED), "--batch", "2", *provider.options())
        checks.check("key attestation: completed", code == 0 and (result or {}).get("state") == "completed", str(result) + err)
        request = issuer.requests[-1] if issuer.requests else {"keys": [], "attestations": []}
        attestations = request["attestations"]
        checks.check("key attestation: every proof carried one, and validate_jwt_proof verified it",
                     len(attestations) == 2 and all(attestation is not None for attestation in attestations), str(request))
        attested = {key_id(key) for key in attestations[0].attested_keys} if attestations and attestations[0] else set()
        checks.check("key attestation: it names exactly the batch's proof keys, key_storage iso_18045_basic",
                     attested == {key_id(key) for key in request["keys"]} and len(attested) == 2
                     and attestations[0].key_storage == KEY_STORAGE, str(attested))
        before = (len(wallet(store, "credentials")[1] or []), len(issuer.requests))
        code, result, err = wallet(store, "issue", issuer.offer(ATTESTED))
        checks.check("key attestation: without the provider options the wallet fails keyAttestationUnavailable, asking nothing",
                     code == 1 and (result or {}).get("error") == "credentialRequestFailed"
                     and "keyAttestationUnavailable" in (result or {}).get("detail", "") and len(issuer.requests) == before[1],
                     str(result) + err)
        rogue = WalletProvider(store, "rogue")
        code, result, err = wallet(store, "issue", issuer.offer(ATTESTED), *rogue.options())
        checks.check("key attestation: one under a provider the issuer does not trust is refused with invalid_proof",
                     code == 1 and (result or {}).get("error") == "credentialRequestFailed"
                     and "invalid_proof" in (result or {}).get("detail", "")
                     and "wallet provider" in (result or {}).get("detail", ""), str(result) + err)
        checks.check("key attestation: nothing is stored after the two failures", len(wallet(store, "credentials")[1] or []) == before[0])

        # Deferred (202 from the package's credential endpoint), still pending at the first
        # poll (202 again from its deferred endpoint), then issued.
        issuer.defer_next = True
        issuer.pending_polls = 1
        code, result, err = wallet(store, "issue", issuer.offer("identity_sd_jwt"))
        checks.check("deferred: the session ends deferred", code == 0 and (result or {}).get("state") == "deferred", str(result) + err)
        deferred_id = (result or {}).get("credentialId", "-")
        code, result, err = wallet(store, "resume", deferred_id)
        checks.check("deferred: still pending at the first poll, the credential stays deferred",
                     code == 0 and (result or {}).get("state") == "deferred" and (result or {}).get("credentialId") == deferred_id,
                     str(result) + err)
        code, result, err = wallet(store, "resume", deferred_id)
        checks.check("deferred: resumed and completed", code == 0 and (result or {}).get("issued") == [deferred_id], str(result) + err)
        checks.check("credential_identifiers: every credential request used one from its token response",
                     len(issuer.requests) >= 6 and all(r["credential_identifier"] in r["granted"] and r["credential_configuration_id"] is None
                                                       for r in issuer.requests), str(issuer.requests))

        # Deletion tells the issuer.
        code, _, err = wallet(store, "credentials", "delete", issued[0] if issued else "-")
        checks.check("delete: credential_deleted reached the issuer", code == 0 and any(
            (n.event.value if hasattr(n.event, "value") else n.event) == "credential_deleted" for n in issuer.backend.notifications), err)
    finally:
        issuer.stop()
    checks.finish()


if __name__ == "__main__":
    main()
