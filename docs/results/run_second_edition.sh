#!/usr/bin/env bash
# The second edition of the CPU reproduction (issue 16, item 5): the full 20-epoch budget with
# budget curves (every validation improvement is scored on every test bin, so the report can
# state each cell at any budget up to 20 epochs), the paper's one head per layer beside the
# default four heads, every cell also scored on the skewed and extreme test distributions, and
# E_k without a positional encoding. Run from anywhere; it works in the repository root:
#
#   bash docs/results/run_second_edition.sh                    # every stage, then the report
#   STAGES="one-head report archive" bash docs/results/run_second_edition.sh
#
# Every stage is resumable: run the script again after an interruption (Ctrl-C, SIGTERM, a
# reboot, the end of a session) and finished cells are skipped, interrupted ones continue from
# their last epoch. The report stage can run at any time; it covers the cells finished so far
# and lists the ones the specs name that are not finished.
#
# Stages, most important first (all: depths 1..6, --grid epochs=20 and the test bins below):
#   one-head        NoPE, preset one-head (the paper's 1 head), L3..L8 x 3 seeds      108 cells
#   one-head-edge   the same, seeds 3 and 4 at the two depths beside the boundary     22 cells
#                   (k-3 and k-2, those >= 1)
#   four-head       NoPE, preset default (4 heads), L3..L8 x 3 seeds                  108 cells
#   four-head-edge  the same, seeds 3 and 4 beside the boundary                        22 cells
#   ek-nope         NoPE, default preset, E3..E6 x 3 seeds                              72 cells
#   ek-nope-edge    seeds 3 and 4 at depths k-2 and k-1 (registered, conjectured k-1)  16 cells
#   pe              RoPE and ALiBi, default preset, L4..L6 and E3..E5 x 3 seeds        216 cells
#                   (seed 0 of every cell first, then seed 1, then seed 2)
#   pe-edge         ALiBi, seeds 3 and 4 one depth below NoPE's (L_k: k-3; E_k: k-2,      12 cells
#                   one below the registered k-1); chosen after seeds 0-2, where ALiBi
#                   succeeds (L6, E3, E4) or comes within 1.4 points (L5, E5)
#   report          crasp report of each family's finished cells, into $RESULTS/<family>
#   archive         copy the records of every finished cell into $RECORDS/<family> (committed);
#                   every training stage also archives when it ends
#
# Records. $OUT is git-ignored and holds the checkpoints; $RECORDS (default
# $RESULTS/records) keeps, per family, what a report and a resume need of each finished cell:
# sweep.json, sessions/*.json and cells/<id>/{cell,config,results}.json with metrics.jsonl, a few
# kilobytes per cell and no weights. Every invocation first restores $RECORDS into $OUT without
# replacing a file that is there, so a fresh clone resumes where the committed records end (a
# finished cell is one with results.json) and `crasp report $RECORDS/<family>` works on its own.
#
# Families (one sweep directory $OUT/<family> and one report $RESULTS/<family> each, so that the
# report never pools the one-head and four-head models when it selects settings per cell):
# one-head (stages one-head, one-head-edge), four-head, ek-nope, pe (pe, pe-edge).
#
# Test bins of every cell: the paper's 251:300, 301:350, 351:400 (uniform block boundaries)
# and 351:400@skewed, 351:400@extreme (docs/languages.md defines the distributions).
set -euo pipefail
cd "$(dirname "$0")/../.."

source docs/results/script_env.sh
OUT=${OUT:-runs/second-edition}              # one sweep directory per family below (git-ignored)
RESULTS=${RESULTS:-docs/results/second-edition}   # one report per family below (committed)
RECORDS=${RECORDS:-$RESULTS/records}         # the finished cells' records per family (committed)
JOBS=${JOBS:-2}
STAGES=${STAGES:-one-head one-head-edge four-head four-head-edge ek-nope ek-nope-edge pe pe-edge report archive}
BINS='251:300+301:350+351:400+351:400@skewed+351:400@extreme'
GRID=(--grid epochs=20 "test_bins=$BINS")

FAMILIES="one-head four-head ek-nope pe"
source docs/results/stage_lib.sh

run_stage() {
    case "$1" in
    one-head)       sweep one-head --preset one-head --posenc nope --languages L3:L8 --depths 1:6 --seeds 3 ;;
    one-head-edge)  edge one-head one-head 3 8 L 2 ;;
    four-head)      sweep four-head --preset default --posenc nope --languages L3:L8 --depths 1:6 --seeds 3 ;;
    four-head-edge) edge four-head default 3 8 L 2 ;;
    ek-nope)        sweep ek-nope --preset default --posenc nope --languages E3:E6 --depths 1:6 --seeds 3 ;;
    ek-nope-edge)   edge ek-nope default 3 6 E 1 ;;
    pe)             # seed by seed, so that an unfinished stage leaves every cell with the same seeds
                    for seed in 0 1 2; do
                        sweep pe --preset default --posenc rope,alibi --languages L4:L6,E3:E5 --depths 1:6 --seeds "$seed:$seed"
                    done ;;
    pe-edge)        edge pe default 4 6 L 2 alibi below; edge pe default 3 5 E 1 alibi below ;;
    *)  return 2 ;;
    esac
}
run_stages
