#!/usr/bin/env python3
"""Checks that docs/security.md cites only tests that exist, verbatim.

Every table row of the catalogue names, in its last column, the tests that prove the
check: Swift Testing display names in double quotes (`File: "name", "name"`), adversarial
cases as `adversarial [class] "label"` (labels from Tests/Interop/test_adversarial.py),
or a script path in backticks. Each quoted name must be, character for character, the
display name of an @Test in Tests/ (or a label of the adversarial suite); each backticked
path must exist. Prints every mismatch with its line and exits 1 when there is one.

    python3 .ci/check-security-catalogue.py [docs/security.md]
"""
import ast
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
catalogue = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "docs" / "security.md"

# Swift: @Test("…") display names, string escapes resolved (\" and \\ only appear here).
swift_names = set()
test_literal = re.compile(r'@Test\(\s*"((?:[^"\\]|\\.)*)"')
for path in (root / "Tests").rglob("*.swift"):
    for match in test_literal.finditer(path.read_text(encoding="utf-8")):
        swift_names.add(re.sub(r'\\(.)', r'\1', match.group(1)))

# The adversarial suite: every string constant of the script is a candidate label, and
# every f-string a pattern (labels made in loops, e.g. f"{claim} hidden in a disclosure").
adversarial = set()
adversarial_patterns = []
script = root / "Tests" / "Interop" / "test_adversarial.py"
if script.exists():
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            adversarial.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            pattern = "".join(re.escape(part.value) if isinstance(part, ast.Constant) else ".+"
                              for part in node.values)
            adversarial_patterns.append(re.compile(pattern + "$"))


def is_adversarial_label(name):
    return name in adversarial or any(pattern.match(name) for pattern in adversarial_patterns)

problems = []
cited = 0
for number, line in enumerate(catalogue.read_text(encoding="utf-8").splitlines(), 1):
    if not line.startswith("|") or line.startswith("| ---") or line.startswith("| Check"):
        continue
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    tests = cells[-1]
    if tests in ("same", "") or tests.startswith("same "):
        continue
    quoted = list(re.finditer(r'"([^"]*)"', tests))
    # Backticked paths (a `/` in them) cite scripts; other backticks are code, not tests.
    paths = [path for path in re.findall(r'`([^`]*)`', tests) if "/" in path]
    if not quoted and not paths:
        problems.append(f"{catalogue.name}:{number}: no test cited: {tests}")
    for path in paths:
        cited += 1
        if not (root / path).exists():
            problems.append(f"{catalogue.name}:{number}: no such file `{path}`")
    # Names after "adversarial [class]" (until the next ';' between names) are suite labels;
    # test names may hold ';' themselves, so only the text between names is looked at.
    in_adversarial = False
    previous_end = 0
    for match in quoted:
        gap = tests[previous_end:match.start()]
        previous_end = match.end()
        if ";" in gap:
            in_adversarial = False
        if "adversarial [" in gap or re.search(r'\[[a-z]+\]', gap):
            in_adversarial = True
        name = match.group(1)
        cited += 1
        if name.startswith("…") or name.endswith("…"):
            problems.append(f'{catalogue.name}:{number}: abbreviated name "{name}"')
        elif in_adversarial:
            if not is_adversarial_label(name):
                problems.append(f'{catalogue.name}:{number}: no adversarial case "{name}"')
        elif name not in swift_names:
            problems.append(f'{catalogue.name}:{number}: no @Test named "{name}"')

for problem in problems:
    print(problem)
print(f"security catalogue: {cited} citations, {len(problems)} mismatches")
sys.exit(1 if problems else 0)
