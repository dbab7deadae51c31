#!/usr/bin/env bash
# The committed CPU reproduction of Knee-Deep's depth-versus-k result (issue 6), as run for
# docs/results/. Run from anywhere; it works in the repository root:
#
#   bash docs/results/run_reproduction.sh                 # all stages, then the report
#   STAGES=A bash docs/results/run_reproduction.sh        # only the NoPE grid
#   STAGES=report bash docs/results/run_reproduction.sh   # only (re)write the report
#
# Every stage is resumable: run the script again after an interruption (Ctrl-C, a reboot)
# and finished cells are skipped, interrupted ones continue from their last epoch.
#
# Recipe: the trainer's `default` preset as it stands at the commit recorded in
# docs/results/environment.txt (d_model 64, 4 heads, FF 256, pre-LN, AdamW lr 1e-3, batch 32,
# <= 20 epochs, patience 6, stop at 100% validation exact match; the paper's lengths: train
# 201-250, tests 251-300 / 301-350 / 351-400; 2000 training strings, 500 per test bin). Every
# cell's full resolved config is in docs/results/cells.csv. Extra trainer overrides can be
# passed with RECIPE="epochs=30 patience=8" (they join every stage's --grid and change the
# cell ids, so they start new cells).
#
# Cost on this machine (2 vCPU AMD EPYC, torch 2.13 CPU, one thread per worker), estimated
# from measured cells of this recipe: one epoch is about 0.5 + 4.7 * depth seconds (L5 depth 3
# NoPE: 36 s for the whole cell, 2 epochs to success; L5 depth 1 NoPE: 98 s, 20 epochs, fails;
# E4 depth 3 ALiBi: 132 s, 9 epochs), failing cells run all 20 epochs, so
#   A  NoPE  L3..L8 x depth 1..6 x 3 seeds          108 cells  ~4.5 h one-thread  ~2.3 h
#   B  RoPE, ALiBi  L3..L6 x depth 1..6 x 1 seed      48 cells  ~1.5 h one-thread  ~0.8 h
#   C  NoPE, RoPE, ALiBi  E3..E5 x depth 1..6 x 1 seed 54 cells  ~2.2 h one-thread  ~1.1 h
# i.e. about 4 h of wall time with JOBS=2 (run-to-run noise on this machine is about 20%).
# More seeds for B and C: SEEDS_PE=3 (about +4 h).
set -euo pipefail
cd "$(dirname "$0")/../.."

CRASP=${CRASP:-crasp}
if ! command -v "$CRASP" >/dev/null 2>&1 && [ -x .venv/bin/crasp ]; then CRASP=.venv/bin/crasp; fi
OUT=${OUT:-runs/reproduction}          # the sweep directory (git-ignored)
RESULTS=${RESULTS:-docs/results}       # where the report goes (committed)
JOBS=${JOBS:-2}
SEEDS_NOPE=${SEEDS_NOPE:-3}
SEEDS_PE=${SEEDS_PE:-1}
STAGES=${STAGES:-A B C report}
read -r -a RECIPE_ARGS <<< "${RECIPE:-}"
GRID=()
if [ ${#RECIPE_ARGS[@]} -gt 0 ]; then GRID=(--grid "${RECIPE_ARGS[@]}"); fi

mkdir -p "$OUT" "$RESULTS"
{
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
    echo "python: $(python3 --version 2>&1)"
    echo "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo unknown)"
    echo "jobs: $JOBS; stages: $STAGES; seeds: NoPE $SEEDS_NOPE, RoPE/ALiBi $SEEDS_PE; recipe overrides: ${RECIPE:-none}"
} > "$RESULTS/environment.txt"

start=$(date +%s)
for stage in $STAGES; do
    case "$stage" in
    A)  # The paper's experiment: NoPE, L_k prediction, depth k - 2 predicted.
        "$CRASP" sweep --depths 1:6 --languages L3:L8 --posenc nope --seeds "$SEEDS_NOPE" \
            ${GRID[@]+"${GRID[@]}"} --jobs "$JOBS" -o "$OUT" ;;
    B)  # RoPE and ALiBi on L_k: local attention may collapse L_k to depth 1 (theory.md §7).
        "$CRASP" sweep --depths 1:6 --languages L3:L6 --posenc rope,alibi --seeds "$SEEDS_PE" \
            ${GRID[@]+"${GRID[@]}"} --jobs "$JOBS" -o "$OUT" ;;
    C)  # E_k (L_k with a neutral letter e): the hierarchy that survives positional encodings;
        # prediction depth k - 1. NoPE alongside, as the baseline.
        "$CRASP" sweep --depths 1:6 --languages E3:E5 --posenc nope,rope,alibi \
            --seeds "$SEEDS_PE" ${GRID[@]+"${GRID[@]}"} --jobs "$JOBS" -o "$OUT" ;;
    report)
        "$CRASP" report "$OUT" -o "$RESULTS" ;;
    *)  echo "unknown stage $stage (A, B, C, report)" >&2; exit 2 ;;
    esac
done
echo "wall time of this invocation: $(( $(date +%s) - start )) s" | tee -a "$RESULTS/environment.txt"
