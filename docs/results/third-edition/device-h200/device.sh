#!/usr/bin/env bash
# The third edition's stages on a lent GPU machine (16 cores, one GPU), for DEADLINE seconds.
# Same sweep arguments as docs/results/run_third_edition.sh (so the same cell ids: device stays
# 'auto', recorded per cell), more cells per sweep invocation so 15 workers stay busy.
# Every family runs frozen code, so each keeps one code fingerprint: E_k families cad8b96's
# crasp/ in .dev/frozen (`git archive cad8b96 crasp | tar -x -C .dev/frozen`), the searches
# 43613bd's in .dev/frozen-search (the same code as this checkout had when PLAN=first ran).
# PLAN=first (default) is what the first lease ran (README.md); PLAN=next the searches that
# are left at L6..L8, one head and four heads, with the paper's exact grid at k - 2 (seed 0);
# PLAN=paper the paper's exact grid at k - 1, k and k - 3 with the k - 2 seeds left (fourth lease)
# PLAN=split the paper's grid left after the sixth lease in parts (--split-trials, code of the
# commit in .dev/frozen-split: `git archive <commit> crasp | tar -x -C .dev/frozen-split`)
# (the second lease ran this file as of commit 82535da; the third, with WORKERS and PAPER_SEEDS,
# is in ../device-h200-2/environment.txt). Finished cells are restored from
# the committed records (one directory per sweep: a sweep directory is locked per shard).
# docs/results/import_lease.py brings what the calls bring back into the repository.
# DRY_RUN=1 prints each sweep the plan would start (name, then its arguments) and exits: no
# install, no records restored, nothing run (tests/test_results_device_driver.py reads it).
set -u
T0=$(date +%s)
DEADLINE=${DEADLINE:-520}
ROOT=$PWD
OUT=${OUT:-/tmp/out}
B=${B:-/tmp}
W=$B/w
mkdir -p "$W" "$OUT" $B/logs
if [ -z "${SKIP_INSTALL:-}${DRY_RUN:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .dev/whl/*.whl || exit 1
fi
PY=${PY:-python3}
PLAN=${PLAN:-first}
[ -n "${DRY_RUN:-}" ] || {
    date -u +%Y-%m-%dT%H:%M:%SZ; nproc; grep -m1 'model name' /proc/cpuinfo
    nvidia-smi -L 2>&1 | head -2
    $PY -c 'import torch, platform; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "python", platform.python_version())'
    # the device's copy of the tree may carry an older .git than its files: name the driver by its
    # blob (`git log --find-object=<blob>` finds the commits that have it)
    echo "main commit: $(git rev-parse HEAD 2>/dev/null); driver blob: $(git hash-object "$0" 2>/dev/null)"
    echo "frozen: cad8b96"
    echo "plan: $PLAN"
    echo "fingerprints: search $(PYTHONPATH=$ROOT/.dev/frozen-search:/tmp/site $PY -P -m crasp --version) / frozen $(PYTHONPATH=$ROOT/.dev/frozen:/tmp/site $PY -P -m crasp --version)"
    [ "$PLAN" != split ] || echo "fingerprint: split $(PYTHONPATH=$ROOT/.dev/frozen-split:/tmp/site $PY -P -m crasp --version)"
} > $B/logs/environment.txt 2>&1
[ -n "${DRY_RUN:-}" ] || cat $B/logs/environment.txt

R=docs/results/third-edition/records
# $1 a sweep directory's name, family first (search-one-head.L6): the family's finished cells
restore() { local family=${1%%.*}; [ -d "$R/$family" ] || return 0; mkdir -p "$W/$1"; cp -r "$R/$family/." "$W/$1/"; }
[ -n "${DRY_RUN:-}" ] || for family in ek-one-head alibi-one-head search-one-head search-four-head paper-grid; do restore "$family"; done

BINS='251:300+301:350+351:400+351:400@skewed+351:400@extreme'
SEARCH='d_model=64,256 lr=1e-3,3e-4,1e-4 epochs=25'
main()   { PYTHONPATH=$ROOT/.dev/frozen-search:/tmp/site $PY -P -m crasp "$@"; }
frozen() { PYTHONPATH=$ROOT/.dev/frozen:/tmp/site $PY -P -m crasp "$@"; }
ek()     { frozen sweep --grid epochs=20 "test_bins=$BINS" --jobs "$1" -o "$W/$2" "${@:3}"; }
search() { [ -d "$W/$2" ] || restore "$2"; main sweep --grid "test_bins=$BINS" --jobs "$1" -o "$W/$2" "${@:3}"; }
split()  { [ -d "$W/$2" ] || restore "$2"; PYTHONPATH=$ROOT/.dev/frozen-split:/tmp/site $PY -P -m crasp sweep --grid "test_bins=$BINS" --jobs "$1" -o "$W/$2" "${@:3}"; }
timed()  { if [ -n "${DRY_RUN:-}" ]; then echo "$*"; return 0; fi; local name=$1 s rc; shift; [ $(( $(date +%s) - T0 )) -lt "$DEADLINE" ] || return 0; s=$(date +%s); "$@" >> "$B/logs/$name.log" 2>&1; rc=$?; echo "$name: $(( $(date +%s) - s )) s, exit $rc" >> "$B/logs/times.txt"; }

# The next lease: per language, one sweep of one head and one of four heads, each with depths
# k - 2, k - 1, k, then k - 3 (cells run in the order of --depths, so no worker waits for a depth
# to end; finished cells are restored from records/ and skipped), and the paper's exact grid at
# k - 2, seed 0, one worker per language: 15 workers. The second lease (README.md) ran the one-
# head sweeps with 4 workers each: every cell at k - 2..k is done, 8 at k - 3 remain.
# $1 family, $2 preset, $3 k, $4 workers.
chain() {
    local family=$1 preset=$2 k=$3 jobs=$4
    timed "$family-L$k" search "$jobs" "$family.L$k" --preset "$preset" --posenc nope --languages "L$k" --depths "$((k - 2)):$k,$((k - 3))" --seeds 0:4 --search "$SEARCH"
}
# PAPER_SEEDS=first:last (default 0:0), one worker per seed.
paper_grid_at_k_minus_2() {
    local k=$1 seeds=${PAPER_SEEDS:-0:0}
    timed "paper-grid-L$k" search $(( ${seeds#*:} - ${seeds%:*} + 1 )) "paper-grid.L$k" --preset knee-deep --posenc nope --languages "L$k" --depths "$((k - 2)):$((k - 2))" --seeds "$seeds" --search paper
}
next_plan() {
    # Workers per chain follow the cells left (the third lease, 2026-11-26: one head L6 2, L7 2,
    # L8 3; four heads L6 3 of 8, L7 none left, L8 6): WORKERS="oneL6 oneL7 oneL8 fourL6 fourL7
    # fourL8", 2 each by default. A chain given 0 workers does not start.
    local k i=0 w=(${WORKERS:-2 2 2 2 2 2})
    for k in 6 7 8; do
        [ "${w[$i]}" = 0 ] || chain search-one-head one-head "$k" "${w[$i]}" &
        [ "${w[$((i + 3))]}" = 0 ] || chain search-four-head default "$k" "${w[$((i + 3))]}" &
        i=$((i + 1))
    done
    # PAPER_GRID=0 leaves the paper's grid out (a short lease: its cells need over 400 s each)
    [ "${PAPER_GRID:-1}" = 0 ] || for k in 6 7 8; do paper_grid_at_k_minus_2 "$k" & done
}
# The fourth lease (2026-11-27): the paper's exact grid at the depths not yet run, one sweep per
# language with k - 1 and k first (cells that fit in a few epochs finish within the lease) and
# k - 3 last (a cell that never fits needs 4 x 25 epochs, more than a lease), WORKERS="L6 L7 L8";
# and the k - 2 seeds in PAPER_K2 (the fourth lease's "L7:2 L8:3"; the one left since the
# fifth, and the default, "L8:2"), one directory per language and one worker per seed: "L8:2,3"
# runs seeds 2 and 3 in one sweep (two sweeps may not share a directory, which is locked per
# shard).
paper_plan() {
    local k i=0 w=(${WORKERS:-4 5 5}) cell seeds commas
    for k in 6 7 8; do
        [ "${w[$i]}" = 0 ] || timed "paper-grid-L$k" search "${w[$i]}" "paper-grid.L$k" --preset knee-deep --posenc nope --languages "L$k" --depths "$((k - 1)):$k,$((k - 3))" --seeds 0:4 --search paper &
        i=$((i + 1))
    done
    for cell in ${PAPER_K2-L8:2}; do
        k=${cell%%:*}; k=${k#L}; seeds=${cell#*:}
        # a bare number is a count to --seeds ("2": seeds 0 and 1); "2," is seed 2 alone (the
        # sixth lease passed "L8:2" and reran L8 d6 s0, finished long before)
        case $seeds in *[,:]*) ;; *) seeds="$seeds," ;; esac
        commas=${seeds%,}; commas=${commas//[^,]/}
        timed "paper-grid-k2-L$k" search $(( ${#commas} + 1 )) "paper-grid-k2.L$k" --preset knee-deep --posenc nope --languages "L$k" --depths "$((k - 2)):$((k - 2))" --seeds "$seeds" --search paper &
    done
}
# The paper's grid left after the sixth lease (k - 3 at L6..L8 but L6 d3 s0; L8 d6 s2 at k - 2),
# each cell's four configurations as parts (--split-trials): a k - 3 cell needs 4 x 25 epochs, more
# than a lease, but one configuration fits, and every finished part is brought back and kept.
# One sweep per language, WORKERS="L6 L7 L8" (default "4 4 6"): four workers take the four parts
# of one cell; L8 runs d6 s2 first. Parts already in the records are restored and skipped.
split_plan() {
    local k i=0 w=(${WORKERS:-4 4 6}) depths
    for k in 6 7 8; do
        depths=$((k - 3)); [ "$k" = 8 ] && depths="6,5"
        [ "${w[$i]}" = 0 ] || timed "paper-split-L$k" split "${w[$i]}" "paper-grid.L$k" --preset knee-deep --posenc nope --languages "L$k" --depths "$depths" --seeds 0:4 --search paper --split-trials &
        i=$((i + 1))
    done
}
first_plan() {
    # E_k with one head (frozen code): seeds 0..2, then the edge seeds, ALiBi, and seed 0 again on
    # this device into its own directory (the CPU/GPU cross-check of seed 0).
    (
        timed ek-one-head ek 3 ek-one-head --preset one-head --posenc nope --languages E3:E6 --depths 1:6 --seeds 0:2
        for k in 3 4 5 6; do
            timed "ek-edge-E$k" ek 3 ek-one-head --preset one-head --posenc nope --languages "E$k" --depths "$((k - 2)):$((k - 1))" --seeds 3:4
        done
        timed alibi-one-head ek 3 alibi-one-head --preset one-head --posenc alibi --languages E4 --depths 2:2 --seeds 0:4
        timed ek-one-head-gpu-s0 ek 3 ek-one-head-gpu-s0 --preset one-head --posenc nope --languages E3:E6 --depths 1:6 --seeds 0:0
    ) &
    # The searches (43613bd's code): one sweep per language, depths k-3..k, seeds 0..4.
    # Concurrent sweeps need directories of their own (a sweep directory is locked per shard): one
    # per language, merged into the family's records afterwards (cells, sessions, specs).
    for k in 6 7 8; do
        timed "search-one-head-L$k" search 2 "search-one-head.L$k" --preset one-head --posenc nope --languages "L$k" --depths "$((k - 3)):$k" --seeds 0:4 --search "$SEARCH" &
    done
    (
        timed search-l7d4 search 2 search-four-head.L7 --preset default --posenc nope --languages L7 --depths 4:4 --seeds 5:9 --search "$SEARCH"
        timed search-four-head-L7 search 2 search-four-head.L7 --preset default --posenc nope --languages L7 --depths 4:7 --seeds 0:4 --search "$SEARCH"
    ) &
    timed search-four-head-L6 search 2 search-four-head.L6 --preset default --posenc nope --languages L6 --depths 3:6 --seeds 0:4 --search "$SEARCH" &
    timed search-four-head-L8 search 1 search-four-head.L8 --preset default --posenc nope --languages L8 --depths 5:8 --seeds 0:4 --search "$SEARCH" &
    # The paper's exact grid at one disputed cell, to measure what it costs here.
    timed paper-grid search 1 paper-grid --preset knee-deep --posenc nope --languages L7 --depths 4:4 --seeds 0:0 --search paper &
}
case $PLAN in
    first) first_plan ;;
    next)  next_plan ;;
    paper) paper_plan ;;
    split) split_plan ;;
    *)     echo "unknown PLAN $PLAN" >&2; exit 2 ;;
esac
if [ -n "${DRY_RUN:-}" ]; then wait; exit 0; fi

while [ $(( $(date +%s) - T0 )) -lt "$DEADLINE" ] && [ -n "$(jobs -r)" ]; do sleep 5; done
echo "stopping at $(( $(date +%s) - T0 )) s" >> $B/logs/times.txt
pkill -TERM -f -- "-o $W/"; sleep 8; pkill -KILL -f -- "-o $W/"; wait   # this driver's sweeps only
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv > $B/logs/gpu.txt 2>&1

# Bring back the small files: finished cells' records, and the metrics of unfinished cells.
mkdir -p $B/records $B/partial
for dir in "$W"/*/; do
    family=$(basename "$dir")
    [ -f "$dir/sweep.json" ] || continue
    mkdir -p "$B/records/$family/sessions" "$B/partial/$family"
    cp "$dir/sweep.json" "$B/records/$family/"
    cp "$dir"/sessions/*.json "$B/records/$family/sessions/" 2>/dev/null
    for cell in "$dir"/cells/*/; do
        name=$(basename "$cell")
        for part in "$cell"/trials/*/; do   # finished parts of --split-trials, kept either way
            [ -f "$part/results.json" ] || continue
            mkdir -p "$B/records/$family/cells/$name/trials/$(basename "$part")"
            cp "$cell/cell.json" "$B/records/$family/cells/$name/" 2>/dev/null
            for f in config.json results.json metrics.jsonl; do [ -f "$part/$f" ] && cp "$part/$f" "$B/records/$family/cells/$name/trials/$(basename "$part")/"; done
        done
        if [ -f "$cell/results.json" ]; then
            mkdir -p "$B/records/$family/cells/$name"
            for f in cell.json config.json results.json metrics.jsonl; do [ -f "$cell/$f" ] && cp "$cell/$f" "$B/records/$family/cells/$name/"; done
        else
            mkdir -p "$B/partial/$family/$name"
            for f in cell.json config.json metrics.jsonl error.txt; do [ -f "$cell/$f" ] && cp "$cell/$f" "$B/partial/$family/$name/"; done
            find "$cell" -name 'metrics*.jsonl' -o -name 'trial*.json' | while read -r f; do cp "$f" "$B/partial/$family/$name/$(echo "${f#$cell}" | tr / _)"; done
        fi
    done
done
tar -czf "$OUT/records.tar.gz" -C "$B" records
tar -czf "$OUT/partial.tar.gz" -C "$B" partial
tar -czf "$OUT/logs.tar.gz" -C "$B" logs
cat $B/logs/times.txt; ls -la "$OUT"; du -sh $B/records $B/partial
