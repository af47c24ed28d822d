#!/usr/bin/env python3
"""Fails when a public declaration in Sources/ has no /// doc comment above it
(attributes such as @inlinable or @discardableResult may sit in between)."""
import pathlib
import re
import sys

DECL = re.compile(r'^\s*(@\w+(\([^)]*\))?\s+)*(public|open)\s+(?!import)(static\s+|final\s+|override\s+|mutating\s+|nonisolated\s+|indirect\s+|convenience\s+|required\s+|class\s+(?=func|var))*'
                  r'(func|var|let|init|subscript|enum|struct|class|protocol|actor|typealias|case|extension|static)')
missing = []
for path in sorted(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "Sources").rglob("*.swift")):
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if not DECL.match(line) or re.match(r'^\s*public\s+extension\b|^\s*extension\b', line):
            continue
        previous = number - 1
        while previous >= 0 and (lines[previous].strip().startswith("@") or lines[previous].strip() == ""):
            if lines[previous].strip() == "":
                break
            previous -= 1
        if previous < 0 or not (lines[previous].strip().startswith("///") or lines[previous].strip().endswith("*/")):
            missing.append(f"{path}:{number + 1}: {line.strip()}")
for entry in missing:
    print(entry)
print(f"public declarations without a doc comment: {len(missing)}")
sys.exit(1 if missing else 0)
