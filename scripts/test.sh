#!/usr/bin/env bash
# The whole test suite against the built wheel, installed into a fresh virtual environment and
# run from a directory outside the source tree, so that a file missing from the wheel fails; on
# every core (pytest-xdist, -n auto). Arguments go to pytest. In the checkout,
# `.venv/bin/python -m pytest -n auto` runs the same suite against the source (made by
# scripts/setup.sh, an editable install); CI runs only this, the product.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
# Removed in the background: deleting the fresh environment (about 2 GB, most of it torch) took
# 3 minutes of this script's time on the project machine's disk.
trap 'rm -rf "$work" >/dev/null 2>&1 &' EXIT

.venv/bin/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
    --wheel-dir "$work/dist" .
wheel=$(ls "$work"/dist/crasp-*.whl)
python3 -m venv "$work/venv"
# torch first and pinned to the CPU build, as in scripts/setup.sh; crasp itself asks torch>=2.2.
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check torch==2.13.0
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[test]"
# The checkout without crasp/ (the tests, the example copies, the docs and scripts they check),
# so that `import crasp` finds only the installed wheel.
mkdir "$work/suite"
git ls-files -z | grep -zv '^crasp/' | xargs -0 cp --parents -t "$work/suite"
cd "$work/suite"
"$work/venv/bin/python" -c 'import crasp, sys; "site-packages" in crasp.__file__ or sys.exit(
    f"crasp imported from {crasp.__file__}, not from the installed wheel")'
CRASP_WHEEL="$wheel" "$work/venv/bin/python" -m pytest -p no:cacheprovider -m "not slow" \
    -n auto --dist worksteal "$@" tests
