"""Is a searched cell's first trial the second edition's run of the same cell?

    python docs/results/first_trial.py [SEARCH_RECORDS ...]

The third edition's search (``--search "d_model=64,256 lr=1e-3,3e-4,1e-4 epochs=25"``) starts
every cell with d_model 64 and lr 1e-3, the one configuration the second edition trained
(20 epochs), on the same data, seed and recipe, and training is deterministic on one CPU
thread. So where both ran on the CPU the first trial should repeat the second edition's run
epoch by epoch, and a cell that reached 100% validation there within 20 epochs ends its search
with the same model. This prints, for every searched cell of the given records (default: both
third-edition search families) that the second edition also ran (one head: its ``one-head``
family; four heads: ``four-head``): the devices, the epochs both have, whether every
compared epoch's training loss and validation exact match are equal to the last digit, and
each run's epochs and validation at the end of the compared span.
"""

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent
SECOND = RESULTS / "second-edition" / "records"
FAMILIES = {"search-one-head": "one-head", "search-four-head": "four-head"}


def metrics(cell: Path, trial: int = 0) -> list[dict]:
    lines = (json.loads(line) for line in (cell / "metrics.jsonl").read_text().splitlines())
    return [line for line in lines if line.get("trial", 0) == trial]


def key(cell: Path) -> tuple:
    config = json.loads((cell / "config.json").read_text())
    return config["language"], config["depth"], config["posenc"], config["seed"]


def device(cell: Path) -> str:
    return json.loads((cell / "results.json").read_text())["environment"]["device"]


def comparisons(searched: list[Path]) -> list[dict]:
    """One row per searched cell of ``searched`` (record directories) that the second edition
    also ran: its name, the two devices, the epochs compared, whether they are identical, and
    each run's epochs and last compared validation exact match."""
    table = []
    for records in searched:
        earlier = {key(c): c for c in (SECOND / FAMILIES[records.name] / "cells").glob("*/")
                   if (c / "results.json").is_file()}
        for cell in sorted((records / "cells").glob("*/")):
            if not (cell / "results.json").is_file() or key(cell) not in earlier:
                continue
            old, new = metrics(earlier[key(cell)]), metrics(cell)
            span = min(len(old), len(new))
            table.append({
                "cell": f"{records.name}/{cell.name}",
                "devices": (device(earlier[key(cell)]), device(cell)), "span": span,
                "identical": all(a["loss"] == b["loss"]
                                 and a["val_exact_match"] == b["val_exact_match"]
                                 for a, b in zip(old[:span], new[:span])),
                "second": (len(old), old[span - 1]["val_exact_match"]),
                "first_trial": (len(new), new[span - 1]["val_exact_match"])})
    return table


def main(argv: list[str]) -> int:
    searched = [Path(a) for a in argv] or [RESULTS / "third-edition" / "records" / f
                                            for f in FAMILIES]
    print("cell\tdevices\tepochs compared\tidentical\tsecond edition\tfirst trial")
    for row in comparisons(searched):
        print(f"{row['cell']}\t{'->'.join(row['devices'])}\t{row['span']}\t"
              f"{'yes' if row['identical'] else 'no'}\t"
              f"{row['second'][0]} epochs, val {row['second'][1]}\t"
              f"{row['first_trial'][0]} epochs, val {row['first_trial'][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
