#!/usr/bin/env bash
# Spread one `crasp sweep` over a Slurm job array: task i of n runs the cells with
# index % n == i (`--shard i/n`), each task on its own CPUs, all writing to one shared
# directory (cells are disjoint; sweep.json is written atomically and is the same for all).
#
#   sbatch scripts/slurm_sweep.sh                 # 8 tasks, default grid below
#   sbatch --array=0-15 scripts/slurm_sweep.sh    # more tasks: the shard count follows the array
#   crasp report runs/knee-deep                   # once the array has finished (or at any time)
#
# Resubmitting the same script resumes: finished cells are skipped, interrupted cells continue
# from their last checkpoint. Slurm sends SIGTERM at the time limit or on preemption; the
# sweep then stops its workers and keeps every result written so far.
# Per-task directories also work (-o "$OUT/shard-$SLURM_ARRAY_TASK_ID"):
# `crasp report DIR1 DIR2 ...` merges them.
#
#SBATCH --job-name=crasp-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=04:00:00
#SBATCH --output=slurm-%A_%a.out
#SBATCH --requeue

set -euo pipefail

OUT=${OUT:-runs/knee-deep}
JOBS=${JOBS:-${SLURM_CPUS_PER_TASK:-2}}     # one single-threaded worker per CPU
TASK=$(( ${SLURM_ARRAY_TASK_ID:-0} - ${SLURM_ARRAY_TASK_MIN:-0} ))   # 0-based even for --array=1-8
COUNT=${SLURM_ARRAY_TASK_COUNT:-1}
CRASP=${CRASP:-crasp}                       # e.g. CRASP=.venv/bin/crasp

# Every task must enumerate the same cells: keep these arguments identical across the array.
exec "$CRASP" sweep \
    --depths 1:6 --languages L3:L8 --posenc nope --seeds 3 \
    --jobs "$JOBS" --shard "$TASK/$COUNT" --no-progress -o "$OUT"
