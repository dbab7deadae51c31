#!/usr/bin/env bash
# The whole test suite twice: in the checkout (.venv, made by scripts/setup.sh), then against
# the built wheel installed into a fresh virtual environment and run from a directory outside
# the source tree, so that a file missing from the wheel fails. Arguments go to both pytest runs.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest "$@"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
CRASP_WHEEL="$wheel" "$work/venv/bin/python" -m pytest -p no:cacheprovider -m "not slow" "$@" tests
