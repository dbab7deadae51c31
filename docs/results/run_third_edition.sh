#!/usr/bin/env bash
# The third edition of the CPU reproduction (issue 33): the cells the second edition left open.
# Same budget and test bins as the second edition (20 epochs with budget curves; every cell also
# scored on the skewed and extreme distributions); the stages and helpers are the second
# edition's (docs/results/stage_lib.sh). Run from anywhere; it works in the repository root:
#
#   bash docs/results/run_third_edition.sh                     # every stage, then the report
#   STAGES="ek-one-head report archive" bash docs/results/run_third_edition.sh
#
# Every stage is resumable (finished cells are skipped, interrupted ones continue from their last
# epoch), and every training stage archives the records of its finished cells when it ends.
#
# Stages (all: NoPE unless said, --grid epochs=20 and the test bins below):
#   ek-one-head       E_k with the paper's one head per layer (never run before): preset
#                     one-head, E3..E6 x depths 1..6, seed by seed 0, 1, 2            72 cells
#   ek-one-head-edge  the same, seeds 3 and 4 at depths k-2 and k-1 (E_k's registered    16 cells
#                     boundary is k-1)
#   alibi-one-head    ALiBi with one head at E4 d2, seeds 0..4: where ALiBi with four      5 cells
#                     heads beat NoPE's depth (4 of 5 seeds in the second edition)
#   report, archive   as in the second edition
#
# Families: ek-one-head (stages ek-one-head, ek-one-head-edge), alibi-one-head.
# Test bins: 251:300, 301:350, 351:400, 351:400@skewed, 351:400@extreme.
set -euo pipefail
cd "$(dirname "$0")/../.."

source docs/results/script_env.sh
OUT=${OUT:-runs/third-edition}               # one sweep directory per family (git-ignored)
RESULTS=${RESULTS:-docs/results/third-edition}   # one report per family (committed)
RECORDS=${RECORDS:-$RESULTS/records}         # the finished cells' records per family (committed)
JOBS=${JOBS:-2}
STAGES=${STAGES:-ek-one-head ek-one-head-edge alibi-one-head report archive}
BINS='251:300+301:350+351:400+351:400@skewed+351:400@extreme'
GRID=(--grid epochs=20 "test_bins=$BINS")

FAMILIES="ek-one-head alibi-one-head"
source docs/results/stage_lib.sh

run_stage() {
    case "$1" in
    ek-one-head)      # seed by seed, so that an unfinished stage leaves every cell with the same seeds
                      for seed in 0 1 2; do
                          sweep ek-one-head --preset one-head --posenc nope --languages E3:E6 --depths 1:6 --seeds "$seed:$seed"
                      done ;;
    ek-one-head-edge) edge ek-one-head one-head 3 6 E 1 ;;
    alibi-one-head)   sweep alibi-one-head --preset one-head --posenc alibi --languages E4 --depths 2:2 --seeds 0:4 ;;
    *)  return 2 ;;
    esac
}
run_stages
