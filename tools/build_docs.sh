#!/usr/bin/env bash
# Build the documentation site (docs/site) with every warning an error, from scratch.
#
#   tools/build_docs.sh [OUTDIR]        # default OUTDIR: /tmp/docs-html
#
# Needs the docs extra (pip install -e ".[docs]") and the compiled kernels: the user-guide
# examples (docs/site/examples/plot_*.py) run during the build, as scikit-learn's gallery does,
# and a failing example fails the build. PYTHON selects the interpreter (default: python).
# Exits non-zero on any warning (-W; --keep-going reports all of them first).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-/tmp/docs-html}"
PYTHON="${PYTHON:-python}"
cd "$ROOT"
# Generated sources (autosummary stubs, gallery pages, the API page) are rebuilt every time:
# a stale stub would hide a renamed or removed object.
rm -rf docs/site/generated docs/site/auto_examples docs/site/api.rst "$OUT"
exec "$PYTHON" -m sphinx -W --keep-going -E -b html docs/site "$OUT"
