"""Print the Markdown tables of docs/analysis.md from the runs that produced them.

    python docs/analysis/tables.py hessian RUN_NOPE_HESSIAN RUN_ROPE_HESSIAN
    python docs/analysis/tables.py depth ANALYSIS_DIR [ANALYSIS_DIR ...]
    python docs/analysis/tables.py study REPORT_DIR/cells.csv

``hessian`` reads two ``crasp analyze --hessian`` outputs and prints, per weight block, the
Frobenius norm of its diagonal Hessian block and the range of its eigenvalues, side by side,
then the norm of all diagonal blocks against all off-diagonal ones. ``depth`` reads
``crasp analyze`` outputs and prints one row per run: language, nominal depth, theory depth,
effective depth under mean- and zero-ablation with the layers kept, and the exact match of the
unablated model on the longest bin. ``study`` reads a report's ``cells.csv`` and prints, per
architecture, language and depth, the mean over seeds of the validation exact match and of the
exact match on the longest bin, the seeds that reach 99% there, and the mean epochs run.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path


def short(block: str) -> str:
    return block.removeprefix("layers.").removesuffix(".weight")


def hessian(nope: str, rope: str) -> None:
    records = [json.loads((Path(d) / "hessian.json").read_text()) for d in (nope, rope)]
    print("| block | NoPE ‖H‖_F | NoPE eigenvalues | RoPE ‖H‖_F | RoPE eigenvalues |")
    print("|---|---:|---|---:|---|")
    for i, block in enumerate(records[0]["blocks"]):
        cells = []
        for record in records:
            spectrum = record["spectra"][block]
            cells += [f"{record['block_norms'][i][i]:.3g}",
                      f"[{min(spectrum):.2g}, {max(spectrum):.2g}]"]
        print(f"| {short(block)} | " + " | ".join(cells) + " |")
    for name, record in zip(("NoPE", "RoPE"), records):
        norms = record["block_norms"]
        n = len(norms)
        diagonal = math.sqrt(sum(norms[i][i] ** 2 for i in range(n)))
        off = math.sqrt(sum(norms[i][j] ** 2 for i in range(n) for j in range(n) if i != j))
        print(f"\n{name}: diagonal blocks {diagonal:.3g}, off-diagonal blocks {off:.3g} "
              f"(Frobenius norms over {record['batch']['n_strings']} strings of "
              f"{record['batch']['bin']})")


def depth(directories: list[str]) -> None:
    print("| run | language | nominal depth | theory | effective (mean) | kept | "
          "effective (zero) | kept | exact match, longest bin |")
    print("|---|---|---:|---:|---:|---|---:|---|---:|")
    for directory in directories:
        record = json.loads((Path(directory) / "analysis.json").read_text())
        effective = record["effective_depth"]
        longest = record["longest_bin"]
        print(f"| {Path(directory).name} | {record['language']} | {record['nominal_depth']} | "
              f"{record['theory_depth']} | {effective['mean']['effective_depth']} | "
              f"{effective['mean']['kept_layers']} | {effective['zero']['effective_depth']} | "
              f"{effective['zero']['kept_layers']} | "
              f"{100 * record['baseline'][longest]['exact_match']:.1f}% |")


def study(cells_csv: str) -> None:
    groups = defaultdict(list)
    for row in csv.DictReader(open(cells_csv, encoding="utf-8")):
        attention = row.get("attention") or "softmax"
        architecture = row["posenc"] + ("" if attention == "softmax" else f"+{attention}")
        groups[(architecture, row["language"], int(row["depth"]))].append(row)
    print("| architecture | language | depth | validation | 351–400 | seeds ≥ 99% | epochs run |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (architecture, language, depth), rows in groups.items():
        def mean(key):
            return sum(float(r[key]) for r in rows) / len(rows)
        passed = sum(float(r["long_exact_match"]) >= 0.99 for r in rows)
        print(f"| {architecture} | {language} | {depth} | {100 * mean('val_exact_match'):.1f} | "
              f"{100 * mean('long_exact_match'):.1f} | {passed} of {len(rows)} | "
              f"{mean('epochs_run'):.1f} |")


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    {"hessian": lambda: hessian(*arguments), "depth": lambda: depth(arguments),
     "study": lambda: study(*arguments)}[command]()
