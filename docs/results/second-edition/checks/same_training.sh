#!/usr/bin/env bash
# Whether the code of several commits trains one small run alike (the claims of the second
# edition's README, "Code, machine, cost"): each commit's sources are exported with git archive
# (no worktree, no install) and run by one Python and torch, with PYTHONPATH pointing at them;
# the script prints, per commit, the SHA-256 of best.safetensors and the epoch losses, then, for
# the first commit against each other one, whether the weights (every tensor of
# best.safetensors, bit for bit), the file's metadata and results.json without its timings and
# code fingerprint are equal.
#
#   bash docs/results/second-edition/checks/same_training.sh 94ca07c 82a30aa fa60cf4
#
# Run from the repository root; PYTHON (default .venv/bin/python) must have torch installed.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
PYTHON=${PYTHON:-.venv/bin/python}
case $PYTHON in */*) PYTHON=$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON") ;; esac   # the runs work in a temporary directory
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for commit in "$@"; do
    mkdir -p "$WORK/src-$commit"
    git archive "$commit" | tar -x -C "$WORK/src-$commit"
    (cd "$WORK" && PYTHONPATH="$WORK/src-$commit" "$PYTHON" -c "from crasp.cli import main; main()" \
        train --preset one-head --language L4 --depth 2 --seed 0 --epochs 2 --no-progress \
        -o "$WORK/run-$commit" > /dev/null)
    echo "$commit best.safetensors sha256 $(sha256sum "$WORK/run-$commit/best.safetensors" | cut -d' ' -f1)"
    "$PYTHON" - "$WORK/run-$commit" "$commit" <<'PY'
import json, sys
run, commit = sys.argv[1:]
losses = [json.loads(line)["loss"] for line in open(f"{run}/metrics.jsonl")]
print(commit, "epoch losses", " ".join(f"{loss:.10f}" for loss in losses))
results = json.load(open(f"{run}/results.json"))
for key in ("wall_time_s", "train_time_s", "eval_time_s", "environment"):
    results.pop(key, None)
for record in results.get("improvements") or []:
    for key in [k for k in record if k.endswith("_time_s") or k == "elapsed_s"]:
        record.pop(key)
json.dump(results, open(f"{run}/results-untimed.json", "w"), sort_keys=True, indent=1)
PY
done
first=$1; shift
for commit in "$@"; do
    "$PYTHON" - "$WORK/run-$first" "$WORK/run-$commit" "$first vs $commit" <<'PY'
import json, sys
import torch
from safetensors import safe_open
first, other, label = sys.argv[1:]
def weights(run):
    with safe_open(f"{run}/best.safetensors", "pt") as file:
        return {name: file.get_tensor(name) for name in file.keys()}, file.metadata()
(a, meta_a), (b, meta_b) = weights(first), weights(other)
same = a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)
results = open(f"{first}/results-untimed.json").read() == open(f"{other}/results-untimed.json").read()
print(f"{label}: weights {'identical' if same else 'different'} ({len(a)} tensors); metadata "
      f"{'identical' if meta_a == meta_b else 'different: ' + json.dumps(meta_a) + ' / ' + json.dumps(meta_b)}; "
      f"results.json without timings {'identical' if results else 'different'}")
PY
done
