# Sourced by the reproduction scripts in this folder, from the repository root: finds crasp and
# Python (a .venv of scripts/setup.sh if there is one; CRASP and PYTHON set by the caller win),
# and record_environment FILE LINE appends the commit, machine, crasp's version and code
# fingerprint (the code that runs, which need not be the commit's), Python and torch versions, and
# LINE (the script's own settings) to FILE.
CRASP=${CRASP:-crasp}
if ! command -v "$CRASP" >/dev/null 2>&1 && [ -x .venv/bin/crasp ]; then CRASP=.venv/bin/crasp; fi
if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; fi
fi

record_environment() {
    {
        echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
        echo "crasp: $("$CRASP" --version 2>/dev/null || echo unknown)"
        echo "python: $("$PYTHON" --version 2>&1)"
        echo "torch: $("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo unknown)"
        echo "$2"
    } >> "$1"
}
