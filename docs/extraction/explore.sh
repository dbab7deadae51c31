#!/usr/bin/env bash
# The sizing runs of docs/extraction.md ("Why these settings"), not part of the study: which
# one-head widths and precisions learn L3/L4 at all, and which of them crasp decompile reads
# within its default budget. Writes into ${OUT:-runs/extraction-sizing} (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-runs/extraction-sizing}
COMMON="n_heads=1 norm=none train_bin=4:16 test_bins=17:40 --jobs 1"
nice -n 5 crasp sweep --depths 1:2 --languages L3,L4 --seeds 2 --grid precision=none,6.2 \
    d_model=2,4 d_ff=16 lr=0.003 n_train=1000 n_test=100 epochs=40 patience=10 $COMMON -o "$OUT/explore1"
nice -n 5 crasp sweep --depths 2:3 --languages L4,L5 --seeds 2 --grid precision=4.1,5.2 \
    d_model=2,3,4 d_ff=16 lr=0.003 n_train=1000 n_test=100 epochs=40 patience=10 $COMMON -o "$OUT/explore2"
nice -n 5 crasp sweep --depths 2:3 --languages L4 --seeds 2 --grid precision=none,6.2,8.4 \
    lr=0.003,0.01 d_model=2 d_ff=32 n_train=2000 n_test=100 epochs=100 patience=25 $COMMON -o "$OUT/explore3"
# every fixed-precision run of depth >= 2 (a refusal comes in seconds; a success can take minutes)
for run in "$OUT"/explore*/cells/*fp*; do
    case "$run" in *-d1-*) continue ;; esac
    echo "== $run"
    timeout 300 nice -n 5 crasp decompile "$run" -o "$run/program.crasp" --json --force \
        | python -c 'import json, sys; d = json.load(sys.stdin); print("depth", d["depth"], "work", d["work"], "states", [s["states"] for s in d["states"]])' \
        || true
done
