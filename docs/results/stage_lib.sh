# Sourced by the staged reproduction scripts (run_second_edition.sh, run_third_edition.sh) after
# script_env.sh, from the repository root. The caller sets OUT (sweep directories, git-ignored),
# RESULTS (reports, committed), RECORDS (finished cells' records, committed), JOBS, STAGES, GRID
# (an array of sweep arguments every stage shares), FAMILIES, and defines run_stage NAME, which
# runs one stage and returns 2 for an unknown name; run_stages then runs every stage in STAGES.

# $1 a file, $2 a directory: copies the file there unless the directory has one of that name
# (spelt out because cp -n's exit status differs between coreutils releases).
copy_new() { if [ -f "$1" ] && [ ! -e "$2/$(basename "$1")" ]; then cp "$1" "$2/"; fi; }
# $1 a family's directory to copy from, $2 the one to copy into; only the small files of finished
# cells, and never over a file already there, so nothing of either side is lost.
copy_records() {
    local from=$1 to=$2 cell file
    [ -f "$from/sweep.json" ] || return 0
    mkdir -p "$to/cells" "$to/sessions"
    copy_new "$from/sweep.json" "$to"
    for file in "$from"/sessions/*.json; do copy_new "$file" "$to/sessions"; done
    for cell in "$from"/cells/*/; do
        [ -f "$cell/results.json" ] || continue
        mkdir -p "$to/cells/$(basename "$cell")"
        for file in cell.json config.json results.json metrics.jsonl; do
            copy_new "$cell/$file" "$to/cells/$(basename "$cell")"
        done
    done
}
# Every family's records into $OUT, so a fresh clone resumes where the committed records end.
restore_records() {
    local family
    for family in $FAMILIES; do copy_records "$RECORDS/$family" "$OUT/$family"; done
}
# The records of every family in $OUT into $RECORDS. sweep.json and the sessions grow while a
# family runs, so the newest copy replaces the archived one; cells are written once, and
# copy_records keeps those already archived as they are.
archive() {
    local family file
    for family in $FAMILIES; do
        if [ -f "$OUT/$family/sweep.json" ]; then
            mkdir -p "$RECORDS/$family/sessions"
            cp "$OUT/$family/sweep.json" "$RECORDS/$family/"
            for file in "$OUT/$family"/sessions/*.json; do
                if [ -f "$file" ]; then cp "$file" "$RECORDS/$family/sessions/"; fi
            done
            copy_records "$OUT/$family" "$RECORDS/$family"
        fi
    done
}
# $1 the family, then the sweep's own arguments.
# The environment is recorded once per invocation that trains (report and archive alone do not).
recorded=
sweep() {
    local family=$1; shift
    if [ -z "$recorded" ]; then
        record_environment "$RESULTS/environment.txt" "jobs: $JOBS; stages: $STAGES"; recorded=1
    fi
    "$CRASP" sweep "${GRID[@]}" --jobs "$JOBS" -o "$OUT/$family" "$@"
}
# The seeds 3 and 4 of one family at the depths beside each language's boundary:
# $1 the family, $2 preset, $3 first k, $4 last k, $5 E or L, $6 the boundary's offset from k
# (2 for L_k's k-2; 1 for E_k's registered k-1), $7 the encoding (default nope), $8 which
# depths: "both" (default), k-$6-1 and k-$6, or "below", k-$6-1 alone; depths >= 1.
edge() {
    local family=$1 preset=$2 first=$3 last=$4 letter=$5 offset=$6 posenc=${7:-nope}
    local which=${8:-both} k lo hi
    for k in $(seq "$first" "$last"); do
        hi=$((k - offset)); lo=$((hi - 1)); [ "$lo" -ge 1 ] || lo=1
        if [ "$which" = below ]; then hi=$lo; fi
        sweep "$family" --preset "$preset" --posenc "$posenc" --languages "$letter$k" --depths "$lo:$hi" --seeds 3:4
    done
}
# crasp report of each family that has a sweep, into $RESULTS/<family>.
report_families() {
    local family
    for family in $FAMILIES; do
        if [ -f "$OUT/$family/sweep.json" ]; then "$CRASP" report "$OUT/$family" -o "$RESULTS/$family"; fi
    done
}
# Runs every stage in $STAGES through run_stage, timing each; every training stage leaves its
# records behind, so a machine lost later loses nothing.
run_stages() {
    local start stage stage_start status
    mkdir -p "$OUT" "$RESULTS"
    restore_records
    start=$(date +%s)
    for stage in $STAGES; do
        stage_start=$(date +%s)
        case "$stage" in
        report)  report_families ;;
        archive) archive ;;
        *)       status=0; run_stage "$stage" || status=$?
                 if [ "$status" -eq 2 ]; then echo "unknown stage $stage" >&2; exit 2; fi
                 [ "$status" -eq 0 ] || exit "$status"
                 archive ;;
        esac
        if [ -n "$recorded" ]; then
            echo "stage $stage: $(( $(date +%s) - stage_start )) s (ended $(date -u +%H:%M:%SZ))" | tee -a "$RESULTS/environment.txt"
        fi
    done
    if [ -n "$recorded" ]; then
        echo "wall time of this invocation: $(( $(date +%s) - start )) s" | tee -a "$RESULTS/environment.txt"
    fi
}
