#!/usr/bin/env bash
# The whole test suite twice: in the checkout (.venv, made by scripts/setup.sh), and against the
# built wheel installed into a fresh virtual environment and run from a directory outside the
# source tree, so that a file missing from the wheel fails. The two runs go side by side (the
# machine has two cores); their logs are printed one after the other. Arguments go to both.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The benchmark scripts run once, in the installed wheel's run below (the product): about
# 110 s that running them twice would add to CI's time.
.venv/bin/python -m pytest -p no:cacheprovider --ignore=tests/test_benchmarks_run.py "$@" \
    >"$work/checkout.log" 2>&1 &
checkout=$!

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
installed=0
(
    cd "$work/suite"
    "$work/venv/bin/python" -c 'import crasp, sys; "site-packages" in crasp.__file__ or sys.exit(
        f"crasp imported from {crasp.__file__}, not from the installed wheel")'
    CRASP_WHEEL="$wheel" "$work/venv/bin/python" -m pytest -p no:cacheprovider -m "not slow" \
        "$@" tests
) >"$work/installed.log" 2>&1 || installed=$?
in_checkout=0
wait "$checkout" || in_checkout=$?

echo "=== the suite in the checkout (exit status $in_checkout)"
cat "$work/checkout.log"
echo "=== the suite against the installed wheel, outside the source tree (exit status $installed)"
cat "$work/installed.log"
[ "$in_checkout" -eq 0 ] && [ "$installed" -eq 0 ]
