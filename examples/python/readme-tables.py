"""Writes the Python targets' findings tables into examples/README.md, between the markers
`<!-- python-tables begin -->` and `<!-- python-tables end -->`: `examples/targets/findings.mjs` over
OUT/<target>/report.json (what examples/run-target-suites wrote), one table per target, headed by its
report label (the library and its exact version).
    examples/python/.venv/bin/python examples/python/readme-tables.py OUT TARGET...
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "examples" / "README.md"
BEGIN, END = "<!-- python-tables begin -->", "<!-- python-tables end -->"

out, targets = sys.argv[1], sys.argv[2:]
tables = subprocess.run(["node", str(ROOT / "examples/targets/findings.mjs"), out, *targets],
                        check=True, capture_output=True, text=True, cwd=ROOT).stdout
tables = re.sub(r"^### ", "#### ", tables, flags=re.M)
text = README.read_text()
if BEGIN not in text or END not in text:
    sys.exit(f"{README}: the markers {BEGIN} / {END} are missing")
head, rest = text.split(BEGIN, 1)
README.write_text(f"{head}{BEGIN}\n\n{tables.strip()}\n\n{END}{rest.split(END, 1)[1]}")
print(f"readme-tables: {len(targets)} table(s) written into {README.relative_to(ROOT)}")
