#!/usr/bin/env python3
"""Every ```cpp block of README.md must appear, line for line (leading
indentation aside), in one file of docs/examples/, which `make test` builds
and runs: a snippet that drifts from the code that runs fails here.

   check_readme_snippets.py PROJECT_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
readme = (root / "README.md").read_text()
blocks = re.findall(r"```cpp\n(.*?)```", readme, re.S)
if not blocks:
    sys.exit("README.md has no ```cpp block")


def lines_of(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


examples = {p.name: lines_of(p.read_text()) for p in (root / "docs/examples").glob("*.cpp")}


def contains(haystack, needle):
    return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


failed = 0
for number, block in enumerate(blocks, 1):
    wanted = lines_of(block)
    homes = [name for name, lines in examples.items() if contains(lines, wanted)]
    if homes:
        print(f"block {number}: in docs/examples/{homes[0]}")
    else:
        failed += 1
        print(f"block {number} is in no docs/examples file, starting: {wanted[0]}")
sys.exit(1 if failed else 0)
