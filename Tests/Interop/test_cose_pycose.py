#!/usr/bin/env python3
"""Cross-checks the SDK's COSE_Sign1 and COSE_Mac0 with pycose, in both directions.

The SDK is driven through its CLI: `$WALLET_BIN interop cose <subcommand> ...`
(see Tests/Interop/Tools/COSEInteropCommand.swift). Prints one line per check and
exits non-zero when any check fails.
"""
import os
import subprocess
import sys

import cbor2
from pycose.algorithms import EdDSA, Es256, Es384, Es512, HMAC256
from pycose.headers import KID, Algorithm
from pycose.keys import EC2Key, OKPKey, SymmetricKey
from pycose.keys.curves import Ed25519, P256, P384, P521
from pycose.messages import CoseMessage, Mac0Message, Sign1Message

WALLET_BIN = os.environ.get("WALLET_BIN")
if not WALLET_BIN:
    sys.exit("set WALLET_BIN to the wallet executable")

passed = 0
failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}".rstrip())


def sdk(*args):
    """Runs `wallet interop cose ...`; returns (exit status, stdout stripped, stderr)."""
    result = subprocess.run([WALLET_BIN, "interop", "cose", *args], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout.strip(), result.stderr.strip()


def private_key(alg):
    if alg is EdDSA:
        return OKPKey.generate_key(crv=Ed25519)
    return EC2Key.generate_key(crv={Es256: P256, Es384: P384, Es512: P521}[alg])


def public_key(key):
    if isinstance(key, OKPKey):
        return OKPKey(crv=key.crv, x=key.x)
    return EC2Key(crv=key.crv, x=key.x, y=key.y)


PAYLOAD = b"mdoc issuer-signed payload \x00\x01\x02"
AAD = bytes.fromhex("11aa22bb33cc44dd55006699")

for alg, name in ((Es256, "ES256"), (Es384, "ES384"), (Es512, "ES512"), (EdDSA, "EdDSA")):
    key = private_key(alg)
    pub = public_key(key)

    # SDK signs, pycose verifies.
    status, out, err = sdk("sign1-sign", "--alg", name, "--key", key.encode().hex(),
                           "--payload", PAYLOAD.hex(), "--aad", AAD.hex())
    check(f"sign1 {name}: SDK signs", status == 0, err)
    if status == 0:
        message = CoseMessage.decode(bytes.fromhex(out))
        message.key = pub
        message.external_aad = AAD
        check(f"sign1 {name}: pycose verifies SDK signature", message.verify_signature())
        check(f"sign1 {name}: payload round-trips", message.payload == PAYLOAD)
        check(f"sign1 {name}: alg is protected", message.phdr.get(Algorithm) == alg)
        message.external_aad = b"wrong"
        check(f"sign1 {name}: pycose rejects SDK signature under other AAD", not message.verify_signature())

    # SDK signs with a detached payload, untagged.
    status, out, err = sdk("sign1-sign", "--alg", name, "--key", key.encode().hex(),
                           "--payload", PAYLOAD.hex(), "--detached", "--untagged")
    if status == 0:
        raw = bytes.fromhex(out)
        decoded = cbor2.loads(raw)
        check(f"sign1 {name}: detached payload is nil and untagged", isinstance(decoded, list) and decoded[2] is None)
        tagged = cbor2.dumps(cbor2.CBORTag(18, decoded))
        message = CoseMessage.decode(tagged)
        message.key = pub
        check(f"sign1 {name}: pycose verifies SDK detached signature", message.verify_signature(detached_payload=PAYLOAD))
    else:
        check(f"sign1 {name}: SDK signs detached", False, err)

    # pycose signs, SDK verifies.
    message = Sign1Message(phdr={Algorithm: alg}, uhdr={KID: b"kid-1"}, payload=PAYLOAD, external_aad=AAD)
    message.key = key
    encoded = message.encode()
    status, out, err = sdk("sign1-verify", "--key", pub.encode().hex(), "--aad", AAD.hex(), encoded.hex())
    check(f"sign1 {name}: SDK verifies pycose signature", status == 0 and out == PAYLOAD.hex(), err)
    status, out, err = sdk("sign1-verify", "--key", pub.encode().hex(), encoded.hex())
    check(f"sign1 {name}: SDK rejects pycose signature without its AAD", status == 1 and "invalidSignature" in err, err)
    tampered = bytearray(encoded)
    tampered[-1] ^= 0x01
    status, out, err = sdk("sign1-verify", "--key", pub.encode().hex(), "--aad", AAD.hex(), bytes(tampered).hex())
    check(f"sign1 {name}: SDK rejects a tampered pycose signature", status == 1, err)

# An ES256 message checked with a P-384 key: the SDK refuses the pairing.
key256, key384 = private_key(Es256), private_key(Es384)
message = Sign1Message(phdr={Algorithm: Es256}, payload=PAYLOAD)
message.key = key256
status, out, err = sdk("sign1-verify", "--key", public_key(key384).encode().hex(), message.encode().hex())
check("sign1 ES256 with a P-384 key: SDK reports algorithmKeyMismatch", status == 1 and "algorithmKeyMismatch" in err, err)

# COSE_Mac0, HMAC 256/256.
secret = os.urandom(32)
sym = SymmetricKey(k=secret)
status, out, err = sdk("mac0-create", "--key", secret.hex(), "--payload", PAYLOAD.hex(), "--aad", AAD.hex())
check("mac0 HS256: SDK creates", status == 0, err)
if status == 0:
    message = CoseMessage.decode(bytes.fromhex(out))
    message.key = sym
    message.external_aad = AAD
    check("mac0 HS256: pycose verifies SDK tag", message.verify_tag())
    check("mac0 HS256: payload round-trips", message.payload == PAYLOAD)
    mine = Mac0Message(phdr={Algorithm: HMAC256}, payload=PAYLOAD, external_aad=AAD)
    mine.key = sym
    check("mac0 HS256: SDK and pycose produce identical bytes", mine.encode() == bytes.fromhex(out))

message = Mac0Message(phdr={Algorithm: HMAC256}, uhdr={KID: b"our-secret"}, payload=PAYLOAD, external_aad=AAD)
message.key = sym
encoded = message.encode()
status, out, err = sdk("mac0-verify", "--key", secret.hex(), "--aad", AAD.hex(), encoded.hex())
check("mac0 HS256: SDK verifies pycose tag", status == 0 and out == PAYLOAD.hex(), err)
other = bytearray(secret)
other[0] ^= 0x01
status, out, err = sdk("mac0-verify", "--key", bytes(other).hex(), "--aad", AAD.hex(), encoded.hex())
check("mac0 HS256: SDK rejects pycose tag under a wrong key", status == 1 and "invalidMAC" in err, err)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
