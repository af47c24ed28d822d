"""Shared plumbing for the interop scripts: run the SDK's `wallet` binary and
count checks. Each script prints one line per check and ends with
'N passed, N failed'; it exits non-zero if any check failed."""
import os
import subprocess
import sys


def wallet_bin():
    path = os.environ.get("WALLET_BIN")
    if not path or not os.path.exists(path):
        sys.exit("WALLET_BIN must point at the built `wallet` executable")
    return path


def run_wallet(*args, stdin=None):
    """Runs `wallet ARGS`; returns (exit code, stdout text, stderr text)."""
    proc = subprocess.run([wallet_bin(), *args], input=stdin, capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip()


class Checks:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, label, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   {label}")
        else:
            self.failed += 1
            print(f"FAIL {label} {detail}")

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed or not self.passed else 0)
