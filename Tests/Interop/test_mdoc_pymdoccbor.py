#!/usr/bin/env python3
"""Cross-checks the SDK with pymdoccbor, the EUDI Python mdoc library:
an mdoc issued by pymdoccbor is accepted and presented by the SDK (and the SDK's reader
verifies the presentation), and an MSO minted by the SDK is accepted by pymdoccbor's
verifier (signature, x5chain to the IACA, element digests).
"""
import datetime
import logging
import os
import tempfile

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pymdoccbor.mdoc.issuer import MdocCborIssuer
from pymdoccbor.mdoc.verifier import MdocCbor

from interop_common import Checks, run_wallet
from mdoc_pki import make_pki

logging.getLogger("pymdoccbor").setLevel(logging.CRITICAL)
MDL = "org.iso.18013.5.1.mDL"
NS = "org.iso.18013.5.1"
checks = Checks("mdoc/pymdoccbor")


def d_bytes(key):
    return key.private_numbers().private_value.to_bytes(32, "big")


def sec1(key):
    return key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def cose_key(key):
    numbers = key.public_key().public_numbers()
    return {1: 2, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}


def tag24(value):
    return cbor2.CBORTag(24, cbor2.dumps(value))


def main():
    iaca, ds, ds_key = make_pki("pymdoccbor")
    device_key = ec.generate_private_key(ec.SECP256R1())
    numbers = ds_key.public_key().public_numbers()
    today = datetime.date.today()
    with tempfile.TemporaryDirectory() as folder:
        ds_path = os.path.join(folder, "ds.pem")
        iaca_path = os.path.join(folder, "iaca.pem")
        with open(ds_path, "wb") as file:
            file.write(ds.public_bytes(serialization.Encoding.PEM))
        with open(iaca_path, "wb") as file:
            file.write(iaca.public_bytes(serialization.Encoding.PEM))

        # 1. pymdoccbor issues; the SDK parses, presents and verifies as a reader.
        issuer = MdocCborIssuer(private_key={"KTY": "EC2", "CURVE": "P_256", "ALG": "ES256", "D": d_bytes(ds_key),
                                             "X": numbers.x.to_bytes(32, "big"), "Y": numbers.y.to_bytes(32, "big")},
                                alg="ES256")
        issuer.new(data={NS: {"family_name": "Rossi", "given_name": "Mario", "age_over_18": True,
                              "document_number": "X1234567"}},
                   doctype=MDL, devicekeyinfo=cose_key(device_key), cert_path=ds_path,
                   validity={"issuance_date": today.isoformat(), "expiry_date": (today + datetime.timedelta(days=365)).isoformat()})
        mdoc_hex = issuer.dumps().decode()
        reader_eph = ec.generate_private_key(ec.SECP256R1())
        device_eph = ec.generate_private_key(ec.SECP256R1())
        transcript = [tag24({0: "1.0", 1: [1, tag24(cose_key(device_eph))]}), tag24(cose_key(reader_eph)), None]
        request = {"version": "1.0", "docRequests": [{"itemsRequest": tag24(
            {"docType": MDL, "nameSpaces": {NS: {"family_name": True, "age_over_18": False}}})}]}
        for variant in ("signature", "mac"):
            args = ["interop", "mdoc", "present", "--issuer-signed", mdoc_hex, "--device-key", d_bytes(device_key).hex(),
                    "--request", cbor2.dumps(request).hex(), "--transcript", cbor2.dumps(transcript).hex()]
            if variant == "mac":
                args += ["--mac-reader-pub", sec1(reader_eph).hex()]
            status, response_hex, err = run_wallet(*args)
            checks.check(f"the SDK accepts and presents a pymdoccbor mdoc ({variant})", status == 0, err)
            if status != 0:
                continue
            cli = ["mdoc", "verify", "--response", response_hex, "--transcript", cbor2.dumps(transcript).hex(),
                   "--anchor", iaca_path]
            if variant == "mac":
                cli += ["--reader-key", d_bytes(reader_eph).hex()]
            status, output, err = run_wallet(*cli)
            checks.check(f"the SDK reader verifies the presented pymdoccbor mdoc ({variant})",
                         status == 0 and '"family_name":"Rossi"' in output and "given_name" not in output, err or output)
            presented = MdocCbor()
            presented.loads(response_hex)
            checks.check(f"pymdoccbor verifies the SDK's presentation of its mdoc ({variant})",
                         presented.verify(trusted_root_certs=[iaca]) is True)

        # 2. The SDK mints; pymdoccbor verifies the MSO signature, chain and digests.
        claims = {NS: {"family_name": "Bianchi", "birth_date": cbor2.CBORTag(1004, "1990-01-31"), "age_over_18": True,
                       "portrait": bytes(range(256)) * 8, "driving_privileges": [{"vehicle_category_code": "B"}]}}
        status, issued_hex, err = run_wallet("interop", "mdoc", "issue", "--issuer-key", d_bytes(ds_key).hex(),
                                             "--issuer-cert", ds.public_bytes(serialization.Encoding.DER).hex(),
                                             "--device-pub", sec1(device_key).hex(), "--claims", cbor2.dumps(claims).hex())
        checks.check("the SDK mints an mdoc", status == 0, err)
        status, wrapped_hex, err = run_wallet("interop", "mdoc", "wrap", "--issuer-signed", issued_hex)
        checks.check("the SDK wraps it as an mdoc document", status == 0, err)
        verifier = MdocCbor()
        verifier.loads(wrapped_hex)
        checks.check("pymdoccbor verifies the SDK-minted MSO (signature, chain, digests)",
                     verifier.verify(trusted_root_certs=[iaca]) is True, str(verifier.documents_invalid))
        checks.check("pymdoccbor reads the SDK-minted elements",
                     verifier.disclosure_map.get(NS, {}).get("family_name") == "Bianchi", str(verifier.disclosure_map))

        stranger = make_pki("pymdoccbor")[0]
        untrusted = MdocCbor()
        untrusted.loads(wrapped_hex)
        checks.check("pymdoccbor rejects the SDK-minted MSO under another IACA",
                     untrusted.verify(trusted_root_certs=[stranger]) is False)

        tampered = cbor2.loads(bytes.fromhex(wrapped_hex))
        items = tampered["documents"][0]["issuerSigned"]["nameSpaces"][NS]
        for index, item in enumerate(items):
            decoded = cbor2.loads(item.value)
            if decoded["elementIdentifier"] == "family_name":
                decoded["elementValue"] = "Mallory"
                items[index] = tag24(decoded)
        changed = MdocCbor()
        changed.loads(cbor2.dumps(tampered))
        checks.check("pymdoccbor rejects a changed element of the SDK-minted mdoc",
                     changed.verify(trusted_root_certs=[iaca]) is False)


main()
checks.finish()
