#!/usr/bin/env python3
"""Verifies SDK-built ISO 18013-5 DeviceResponses independently with cbor2, pycose and
cryptography: issuer signature and chain, every digest, docType and validity, device
signature and deviceMac (EMacKey derived here), selective disclosure and documentErrors.

The SDK is driven through `wallet interop mdoc ...` (Sources/wallet/Interop/MdocInteropCommand.swift)
and `wallet mdoc verify`. Everything on this side (keys, certificates, engagement,
transcript, request) is built here with the Python libraries.
"""
import datetime
import hashlib
import os
import tempfile

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.x509.oid import NameOID
from pycose.keys import EC2Key, SymmetricKey
from pycose.keys.curves import P256
from pycose.messages import Mac0Message, Sign1Message

from interop_common import Checks, run_wallet
from mdoc_pki import make_pki

MDL = "org.iso.18013.5.1.mDL"
NS = "org.iso.18013.5.1"
checks = Checks("mdoc/pycose")


def d_hex(key):
    return key.private_numbers().private_value.to_bytes(32, "big").hex()


def sec1(key):
    return key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def cose_key(key):
    numbers = key.public_key().public_numbers()
    return {1: 2, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}


def tag24(value):
    return cbor2.CBORTag(24, cbor2.dumps(value))


def transcript_for(device_eph, reader_eph):
    engagement = {0: "1.0", 1: [1, tag24(cose_key(device_eph))]}
    return [tag24(engagement), tag24(cose_key(reader_eph)), None]


def device_request(doc_types, elements):
    items = [{"docType": dt, "nameSpaces": {NS: {e: False for e in elements}}} for dt in doc_types]
    return {"version": "1.0", "docRequests": [{"itemsRequest": tag24(i)} for i in items]}


def verify_independently(response, transcript, iaca, reader_eph, doc_type=MDL):
    """The reader's checks of ISO 18013-5 §9.3.1, written against the standard with cbor2/pycose."""
    doc = response["documents"][0]
    issuer_signed = doc["issuerSigned"]
    auth = Sign1Message.from_cose_obj(issuer_signed["issuerAuth"], allow_unknown_attributes=True)
    x5chain = auth.uhdr.get(33) if 33 in auth.uhdr else next(v for k, v in auth.uhdr.items() if getattr(k, "identifier", None) == 33)
    ds = x509.load_der_x509_certificate(x5chain if isinstance(x5chain, bytes) else x5chain[0])
    iaca.public_key().verify(ds.signature, ds.tbs_certificate_bytes, ec.ECDSA(ds.signature_hash_algorithm))
    numbers = ds.public_key().public_numbers()
    auth.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
    if not auth.verify_signature():
        raise ValueError("issuer signature")
    mso_tag = cbor2.loads(auth.payload)
    mso = cbor2.loads(mso_tag.value)
    if mso["docType"] != doc["docType"] or doc["docType"] != doc_type:
        raise ValueError("docType")
    now = datetime.datetime.now(datetime.timezone.utc)
    valid_from = mso["validityInfo"]["validFrom"]     # cbor2 turns tag 0 into a datetime
    valid_until = mso["validityInfo"]["validUntil"]
    if not valid_from <= now <= valid_until:
        raise ValueError("validity")
    disclosed = {}
    for ns, items in issuer_signed.get("nameSpaces", {}).items():
        for item in items:
            digest = hashlib.sha256(cbor2.dumps(item)).digest()
            decoded = cbor2.loads(item.value)
            if mso["valueDigests"][ns][decoded["digestID"]] != digest:
                raise ValueError("digest of " + decoded["elementIdentifier"])
            disclosed[decoded["elementIdentifier"]] = decoded["elementValue"]
    device_signed = doc["deviceSigned"]
    payload = cbor2.dumps(tag24(["DeviceAuthentication", transcript, doc["docType"], device_signed["nameSpaces"]]))
    device_key = mso["deviceKeyInfo"]["deviceKey"]
    auth_map = device_signed["deviceAuth"]
    if "deviceSignature" in auth_map:
        msg = Sign1Message.from_cose_obj(auth_map["deviceSignature"], allow_unknown_attributes=True)
        msg.payload = payload
        msg.key = EC2Key(crv=P256, x=device_key[-2], y=device_key[-3])
        if not msg.verify_signature():
            raise ValueError("device signature")
        kind = "signature"
    else:
        msg = Mac0Message.from_cose_obj(auth_map["deviceMac"], allow_unknown_attributes=True)
        msg.payload = payload
        peer = ec.EllipticCurvePublicNumbers(int.from_bytes(device_key[-2], "big"), int.from_bytes(device_key[-3], "big"),
                                             ec.SECP256R1()).public_key()
        zab = reader_eph.exchange(ec.ECDH(), peer)
        salt = hashlib.sha256(cbor2.dumps(tag24(transcript))).digest()
        emac = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"EMacKey").derive(zab)
        msg.key = SymmetricKey(k=emac)
        if not msg.verify_tag():
            raise ValueError("device MAC")
        kind = "mac"
    return disclosed, kind


def main():
    iaca, ds, ds_key = make_pki("Interop")
    device_key = ec.generate_private_key(ec.SECP256R1())
    device_eph = ec.generate_private_key(ec.SECP256R1())
    reader_eph = ec.generate_private_key(ec.SECP256R1())
    claims = {NS: {"family_name": "Mustermann", "given_name": "Erika", "age_over_18": True,
                   "birth_date": cbor2.CBORTag(1004, "1964-08-12"), "portrait": bytes(range(256)) * 4}}
    status, issued_hex, err = run_wallet("interop", "mdoc", "issue", "--issuer-key", d_hex(ds_key),
                                         "--issuer-cert", ds.public_bytes(serialization.Encoding.DER).hex(),
                                         "--device-pub", sec1(device_key).hex(), "--claims", cbor2.dumps(claims).hex())
    checks.check("the SDK issues an mdoc", status == 0, err)
    if status != 0:
        return
    transcript = transcript_for(device_eph, reader_eph)
    transcript_hex = cbor2.dumps(transcript).hex()
    request = device_request([MDL, "org.iso.23220.photoid.1"], ["family_name", "given_name", "age_over_18"])
    consent = {NS: ["family_name", "age_over_18"]}

    with tempfile.TemporaryDirectory() as folder:
        anchor = os.path.join(folder, "iaca.pem")
        with open(anchor, "wb") as file:
            file.write(iaca.public_bytes(serialization.Encoding.PEM))
        for variant in ("signature", "mac"):
            args = ["interop", "mdoc", "present", "--issuer-signed", issued_hex, "--device-key", d_hex(device_key),
                    "--request", cbor2.dumps(request).hex(), "--transcript", transcript_hex,
                    "--consent", cbor2.dumps(consent).hex()]
            if variant == "mac":
                args += ["--mac-reader-pub", sec1(reader_eph).hex()]
            status, response_hex, err = run_wallet(*args)
            checks.check(f"the SDK builds a DeviceResponse ({variant})", status == 0, err)
            if status != 0:
                continue
            response = cbor2.loads(bytes.fromhex(response_hex))
            try:
                disclosed, kind = verify_independently(response, transcript, iaca, reader_eph)
                checks.check(f"pycose/cryptography verify issuer, digests and device {variant}", kind == variant)
                checks.check(f"only requested and consented elements are disclosed ({variant})",
                             disclosed == {"family_name": "Mustermann", "age_over_18": True}, str(disclosed))
            except Exception as error:  # noqa: BLE001 - report any failed check as a failure line
                checks.check(f"pycose/cryptography verify issuer, digests and device {variant}", False, repr(error))
            checks.check(f"the missing docType is a documentError ({variant})",
                         response.get("documentErrors") == [{"org.iso.23220.photoid.1": 0}], str(response.get("documentErrors")))
            checks.check(f"the withheld element is listed in errors ({variant})",
                         response["documents"][0].get("errors") == {NS: {"given_name": 0}})
            checks.check(f"status is 0 ({variant})", response["status"] == 0)

            cli = ["mdoc", "verify", "--response", response_hex, "--transcript", transcript_hex, "--anchor", anchor]
            if variant == "mac":
                cli += ["--reader-key", d_hex(reader_eph)]
            status, output, err = run_wallet(*cli)
            checks.check(f"wallet mdoc verify accepts it ({variant})",
                         status == 0 and '"family_name":"Mustermann"' in output and f'"deviceAuthentication":"{variant}"' in output,
                         err or output)

            # Negative: a changed element value must fail both here and in the SDK.
            tampered = cbor2.loads(bytes.fromhex(response_hex))
            items = tampered["documents"][0]["issuerSigned"]["nameSpaces"][NS]
            for index, item in enumerate(items):
                decoded = cbor2.loads(item.value)
                if decoded["elementIdentifier"] == "family_name":
                    decoded["elementValue"] = "Mallory"
                    items[index] = tag24(decoded)
            tampered_hex = cbor2.dumps(tampered).hex()
            try:
                verify_independently(tampered, transcript, iaca, reader_eph)
                checks.check(f"a changed value fails the independent digest check ({variant})", False)
            except ValueError as error:
                checks.check(f"a changed value fails the independent digest check ({variant})", "digest" in str(error))
            status, _, err = run_wallet("mdoc", "verify", "--response", tampered_hex, "--transcript", transcript_hex,
                                        "--anchor", anchor, *(["--reader-key", d_hex(reader_eph)] if variant == "mac" else []))
            checks.check(f"wallet mdoc verify rejects a changed value ({variant})", status == 1 and "digestMismatch" in err, err)

        # Negative: another transcript fails the device signature.
        other = transcript_for(ec.generate_private_key(ec.SECP256R1()), reader_eph)
        status, response_hex, _ = run_wallet("interop", "mdoc", "present", "--issuer-signed", issued_hex, "--device-key",
                                             d_hex(device_key), "--request", cbor2.dumps(request).hex(),
                                             "--transcript", cbor2.dumps(other).hex())
        try:
            verify_independently(cbor2.loads(bytes.fromhex(response_hex)), transcript, iaca, reader_eph)
            checks.check("a response for another transcript fails the device signature", False)
        except ValueError as error:
            checks.check("a response for another transcript fails the device signature", "device signature" in str(error))


main()
checks.finish()
