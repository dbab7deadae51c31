#!/usr/bin/env bash
# The study of docs/extraction.md, resumable: run it again and finished steps are skipped.
#   bash docs/extraction/run_study.sh            (from the repository root, crasp installed)
# 1. trains every cell (crasp sweep; runs in runs/extraction/<language>, git-ignored): each
#    language at the theory's depth and one above, 3 seeds, the float class and --precision 6.2;
# 2. decompiles every fixed-precision run and extracts a program from every float run, at the
#    precision extract chooses and then at the class's, 6.2 (docs/extraction/study.py; programs
#    in docs/extraction/programs/, reports in docs/extraction/steps/, one per run and command,
#    each naming its command line);
# 3. collects docs/extraction/results.json and regenerates the tables of docs/extraction.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-runs/extraction}
# language:theory depth (crasp languages, "prediction depth"); the study trains depth d and d+1
CELLS="L3:1 L4:2 L5:3 L6:4 E3:2 E4:3"
for cell in $CELLS; do
    language=${cell%%:*}; depth=${cell##*:}
    nice -n 5 crasp sweep --languages "$language" --depths "$depth,$((depth + 1))" --seeds 3 --jobs 1 \
        --grid precision=none,6.2 d_model=2 n_heads=1 d_ff=32 norm=none lr=0.003 \
        train_bin=4:16 test_bins=17:40 n_train=2000 n_test=200 epochs=100 patience=25 \
        -o "$RUNS/$language"
done
nice -n 5 python docs/extraction/study.py steps "$RUNS" docs/extraction
python docs/extraction/study.py collect "$RUNS" docs/extraction
nice -n 5 python docs/extraction/study.py task docs/extraction
python docs/extraction/tables.py --write
