#!/usr/bin/env bash
# The main job on built-in examples: run a program, check its depth, compile it to a
# transformer, verify the weights against the interpreter, run the compiled model, and train a
# depth-1 NoPE transformer on L3 for length generalization.
set -euo pipefail
cd "$(dirname "$0")/.."
crasp=${CRASP:-.venv/bin/crasp}
out=${CRASP_DEMO_DIR:-demo-output}
set -x
$crasp run examples/dyck1.crasp "( ( ) ( ) )"
printf '(())\n())(\n\n' | $crasp run examples/dyck1.crasp --json
$crasp depth-check examples/L5_predict.crasp --max-depth 3
$crasp depth-check examples/dyck1.crasp --verify
$crasp compile examples/dyck1.crasp -o "$out/dyck1.model" --force
$crasp run --model "$out/dyck1.model" "( ( ) ( ) )"
$crasp languages
$crasp train --language L3 --depth 1 --posenc nope --train-bin 21:40 --test-bins 41:80,81:160 --n-train 1000 --n-test 200 --epochs 15 --no-progress --force -o "$out/train-L3-d1"
