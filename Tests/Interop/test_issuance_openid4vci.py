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

What the package cannot serve, and why (so these are not exercised here):
- the authorization code flow and PAR: absent by design ("half of an Authorization
  Server is worse than none", authorization.py);
- DPoP: the router reads `Authorization: Bearer` only (HTTPBearer), no DPoP proofs;
- encrypted requests/responses: the router parses JSON bodies only (`payload: dict`),
  so a compact-JWE Credential Request, which the wallet always sends when it asks for
  an encrypted response (OpenID4VCI 1.0 §10), is refused before the backend sees it;
- refresh tokens: its token responses carry none.
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
from openid4vci.crypto.proofs import validate_jwt_proof
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def payload_of(jwt):
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


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

    async def mint(self, request, context):
        grant = self.auth.grant_for(getattr(context, "access_token", ""))
        if grant is None:
            raise CredentialRequestError(CredentialErrorCode.CREDENTIAL_REQUEST_DENIED, "unknown access token")
        if isinstance(request, dict):      # a deferred transaction's stored payload
            keys, configuration = request["keys"], request["configuration"]
        else:
            configuration = self.configuration_of(request, grant)
            proofs = (request.proofs or {}).get("jwt") or []
            if not proofs or len(proofs) > BATCH:
                raise CredentialRequestError(CredentialErrorCode.INVALID_PROOF, "1 to %d jwt proofs" % BATCH)
            nonce = payload_of(proofs[0]).get("nonce")
            if not nonce or not self.backend.nonces.consume(nonce):
                raise CredentialRequestError(CredentialErrorCode.INVALID_NONCE, "fetch a fresh c_nonce")
            keys = [validate_jwt_proof(p, credential_issuer=self.base, c_nonce=nonce,
                                       supported_algorithms=["ES256"]).bound_key for p in proofs]
            if self.defer_next:
                self.defer_next = False
                transaction = self.backend.transactions.open({"keys": keys, "configuration": configuration})
                return CredentialResponse(transaction_id=transaction, interval=1)
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

        # mdoc.
        code, result, err = wallet(store, "issue", issuer.offer("mdl"), "--batch", "2")
        checks.check("mdoc: completed", code == 0 and (result or {}).get("state") == "completed", err)
        mdoc_id = (result or {}).get("issued", ["-"])[0]
        code, shown, err = wallet(store, "credentials", "show", mdoc_id)
        checks.check("mdoc: docType and elements read back", (shown or {}).get("type") == DOCTYPE
                     and (shown or {}).get("claims", {}).get("org.iso.18013.5.1", {}).get("family_name") == "Musterfrau", str(shown))

        # Deferred (202 from the package's router), then resumed.
        issuer.defer_next = True
        code, result, err = wallet(store, "issue", issuer.offer("identity_sd_jwt"))
        checks.check("deferred: the session ends deferred", code == 0 and (result or {}).get("state") == "deferred", str(result) + err)
        deferred_id = (result or {}).get("credentialId", "-")
        code, result, err = wallet(store, "resume", deferred_id)
        checks.check("deferred: resumed and completed", code == 0 and (result or {}).get("issued") == [deferred_id], str(result) + err)

        # Deletion tells the issuer.
        code, _, err = wallet(store, "credentials", "delete", issued[0] if issued else "-")
        checks.check("delete: credential_deleted reached the issuer", code == 0 and any(
            (n.event.value if hasattr(n.event, "value") else n.event) == "credential_deleted" for n in issuer.backend.notifications), err)
    finally:
        issuer.stop()
    checks.finish()


if __name__ == "__main__":
    main()
