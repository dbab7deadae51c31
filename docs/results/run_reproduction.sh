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
# Recipe: the trainer's `default` preset (d_model 64, 4 heads, FF 256, pre-LN, AdamW lr 1e-3,
# 100 warmup steps, batch 32, stop at 100% validation exact match; the paper's lengths: train
# 201-250, tests 251-300 / 301-350 / 351-400; 2000 strings in the train bin, 1600 train / 400
# validation, 500 per test bin) with one change that makes the whole reproduction fit a few
# hours of a 2-core CPU: at most 6 epochs (300 optimizer steps) instead of 20. RECIPE sets the
# trainer overrides of every stage (default "epochs=6"); they join each stage's --grid and are
# part of the cell ids, so another RECIPE starts new cells. Every cell's full resolved config
# is in docs/results/cells.csv.
#
# Cost on this machine (2 vCPU, torch 2.13 CPU, one thread per worker, two workers): a NoPE
# cell that runs all 6 epochs costs about 22 s per layer (one that succeeds early, about 9 s per
# layer); RoPE and ALiBi cells cost up to about 15% more. Measured wall times (docs/results/README.md):
#   A  NoPE  L3..L8 x depth 1..6 x 3 seeds                108 cells
#   B  RoPE, ALiBi  L3..L8, E3..E5 x depth 1..6 x 1 seed   108 cells
# E6..E8 and more seeds for B do not fit a three-hour session; add them with, e.g.,
#   crasp sweep --depths 1:6 --languages E6:E8 --posenc rope,alibi --seeds 1 --grid epochs=6 \
#       --jobs 2 -o runs/reproduction        (then STAGES=report)
set -euo pipefail
cd "$(dirname "$0")/../.."

source docs/results/script_env.sh
OUT=${OUT:-runs/reproduction}          # the sweep directory (git-ignored)
RESULTS=${RESULTS:-docs/results}       # where the report goes (committed)
JOBS=${JOBS:-2}
SEEDS_NOPE=${SEEDS_NOPE:-3}
SEEDS_PE=${SEEDS_PE:-1}
STAGES=${STAGES:-A B report}
RECIPE=${RECIPE-epochs=6}
read -r -a RECIPE_ARGS <<< "$RECIPE"
GRID=()
if [ ${#RECIPE_ARGS[@]} -gt 0 ]; then GRID=(--grid "${RECIPE_ARGS[@]}"); fi

mkdir -p "$OUT" "$RESULTS"
record_environment "$RESULTS/environment.txt" "jobs: $JOBS; stages: $STAGES; seeds: NoPE $SEEDS_NOPE, RoPE/ALiBi $SEEDS_PE; recipe overrides: ${RECIPE:-none}"

start=$(date +%s)
for stage in $STAGES; do
    stage_start=$(date +%s)
    case "$stage" in
    A)  # The paper's experiment: NoPE, L_k prediction, depth k - 2 predicted.
        "$CRASP" sweep --depths 1:6 --languages L3:L8 --posenc nope --seeds "$SEEDS_NOPE" \
            ${GRID[@]+"${GRID[@]}"} --jobs "$JOBS" -o "$OUT" ;;
    B)  # RoPE and ALiBi on L_k (local attention may collapse L_k to depth 1, theory.md §7) and
        # on E_k (L_k with a neutral letter: the hierarchy that survives positional encodings).
        "$CRASP" sweep --depths 1:6 --languages L3:L8,E3:E5 --posenc rope,alibi \
            --seeds "$SEEDS_PE" ${GRID[@]+"${GRID[@]}"} --jobs "$JOBS" -o "$OUT" ;;
    report)
        "$CRASP" report "$OUT" -o "$RESULTS" ;;
    *)  echo "unknown stage $stage (A, B, report)" >&2; exit 2 ;;
    esac
    echo "stage $stage: $(( $(date +%s) - stage_start )) s" | tee -a "$RESULTS/environment.txt"
done
echo "wall time of this invocation: $(( $(date +%s) - start )) s" | tee -a "$RESULTS/environment.txt"
