"""CBOR interop with cbor2, an independent RFC 8949 implementation.

- Items encoded by cbor2 are decoded by the SDK (`wallet cbor canonical`), which
  re-encodes them deterministically; cbor2 decodes that back to an equal value,
  and the map keys come out in RFC 8949 §4.2.1 order (bytewise on the encoded key).
- Items in non-preferred forms that cbor2 produces (indefinite lengths, doubles for
  small floats) are accepted by the SDK and normalised.
"""
import math
import random

import cbor2
from interop_common import Checks, run_wallet

rng = random.Random(8949)


def random_item(depth=0):
    kinds = ["uint", "nint", "bytes", "text", "bool", "null", "float", "tag"]
    if depth < 3:
        kinds += ["array", "map"] * 2
    kind = rng.choice(kinds)
    if kind == "uint":
        return rng.choice([0, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, rng.randrange(2**64)])
    if kind == "nint":
        return -rng.choice([1, 24, 25, 256, 257, 65537, 2**32 + 1, 2**64, rng.randrange(1, 2**64)])
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 23, 24, 300])))
    if kind == "text":
        return "".join(rng.choice("aé€😀z ") for _ in range(rng.choice([0, 1, 5, 30])))
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "null":
        return None
    if kind == "float":
        return rng.choice([0.0, -0.0, 1.5, 100000.0, 3.4028234663852886e38, 1.0e300, -4.1, 5.960464477539063e-8,
                           float("inf"), float("-inf"), rng.uniform(-1e6, 1e6)])
    if kind == "tag":
        # Tags without a semantic decoder in cbor2, so both sides see a plain tag.
        return cbor2.CBORTag(rng.choice([12345, 40000, 80]), random_item(depth + 1))
    if kind == "array":
        return [random_item(depth + 1) for _ in range(rng.randrange(0, 5))]
    keys = {}
    for _ in range(rng.randrange(0, 6)):
        key = rng.choice([rng.randrange(-30, 300), "".join(rng.choice("abcz") for _ in range(rng.randrange(0, 4))), rng.choice([True, False])])
        keys[key] = random_item(depth + 1)
    return keys


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, cbor2.CBORTag) and isinstance(b, cbor2.CBORTag):
        return a.tag == b.tag and same(a.value, b.value)
    return type(a) is type(b) and a == b


def keys_in_deterministic_order(encoded):
    """Walks the SDK's output with cbor2 and checks every map's keys are sorted
    by their encoded bytes (RFC 8949 §4.2.1)."""
    def walk(value):
        if isinstance(value, dict):
            encoded_keys = [cbor2.dumps(k) for k in value.keys()]
            if encoded_keys != sorted(encoded_keys):
                return False
            return all(walk(v) for v in value.values())
        if isinstance(value, list):
            return all(walk(v) for v in value)
        if isinstance(value, cbor2.CBORTag):
            return walk(value.value)
        return True
    return walk(cbor2.loads(encoded))


checks = Checks("cbor interop (cbor2)")
for index in range(120):
    item = random_item()
    encoded = cbor2.dumps(item)
    code, out, err = run_wallet("cbor", "canonical", encoded.hex())
    if code != 0:
        checks.check(f"item {index}: SDK decodes cbor2 output", False, err)
        continue
    sdk_bytes = bytes.fromhex(out)
    checks.check(f"item {index}: cbor2 reads the SDK's deterministic encoding back to the same value",
                 same(cbor2.loads(sdk_bytes), item), f"{encoded.hex()} -> {out}")
    checks.check(f"item {index}: map keys in bytewise order", keys_in_deterministic_order(sdk_bytes), out)

# Indefinite-length forms written by hand (cbor2 decodes them; the SDK must too).
for label, hex_in, expected in [
    ("indefinite array", "9f0102ff", [1, 2]),
    ("indefinite map", "bf616101ff", {"a": 1}),
    ("indefinite text", "7f6161626263ff", "abc"),
    ("double that fits a half", "fb3ff8000000000000", 1.5),
]:
    code, out, err = run_wallet("cbor", "canonical", hex_in)
    checks.check(f"{label}: normalised by the SDK", code == 0 and same(cbor2.loads(bytes.fromhex(out)), expected), out + err)

checks.finish()
