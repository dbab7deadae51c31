#!/usr/bin/env bash
# Set up .venv for crasp on a fresh machine. torch is installed first and pinned to the CPU
# build 2.13.0 (found in the local wheel folder): an unpinned torch resolved by pip would pull
# gigabytes of CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,verify,interop]"
