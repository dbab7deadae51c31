"""The tables of docs/extraction.md, from the committed docs/extraction/results.json.

    python docs/extraction/tables.py            print every table
    python docs/extraction/tables.py --write    replace each table in docs/extraction.md
    python docs/extraction/tables.py --check    exit 1 if a table there differs from results.json

Each table in docs/extraction.md sits between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->``
(NAME one of TABLES). tests/test_extraction_tables.py runs --check's comparison.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
DOC = HERE.parent / "extraction.md"
# crasp languages, column "prediction depth": the depth of the language's C-RASP program
THEORY_DEPTH = {"L3": 1, "L4": 2, "L5": 3, "L6": 4, "E3": 2, "E4": 3}
SUCCESS = 0.99   # crasp report's threshold, for validation exact match too


def load(path: Path = RESULTS) -> list[dict]:
    return json.loads(path.read_text())["runs"]


def cells(runs: list[dict]) -> list[tuple[str, int]]:
    found = {(run["language"], run["depth"]) for run in runs}
    order = list(THEORY_DEPTH)
    return sorted(found, key=lambda cell: (order.index(cell[0]), cell[1]))


def members(runs, language, depth, fixed: bool) -> list[dict]:
    return sorted((run for run in runs if run["language"] == language and run["depth"] == depth
                   and bool(run["precision"]) == fixed), key=lambda run: run["seed"])


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def _program_depth(step: dict | None) -> int | None:
    return step["depth_check"]["depth"] if step and step["outcome"] == "ok" else None


def _outcome(step: dict | None) -> str:
    return "not run" if step is None else step["outcome"]


def _refusal(step: dict) -> str:
    """Where a refusal stopped, from its message: "layer L (N units)", N the work in all."""
    error = step["error"] or ""
    layer, total = re.search(r"layer (\d+)", error), re.search(r"([\d,]+) in all", error)
    return f"layer {layer[1] if layer else '?'} ({total[1] if total else '?'} units)"


def _read_at(step: dict | None) -> str:
    """The precision crasp extract chose, from its report or its refusal's message."""
    if step is None:
        return "-"
    if step["outcome"] == "ok":
        precision = step["summary"]["precision"]
        return f"{precision['total_bits']}.{precision['frac_bits']}"
    found = re.search(r"read at precision (\d+\.\d+)", step["error"] or "")
    return found[1] if found else "-"


def _succeeds(run: dict) -> bool:
    return run["success"]


def _validates(run: dict) -> bool:
    return run["val_exact_match"] >= SUCCESS


def _count(group: list[dict], holds) -> str:
    return f"{sum(map(holds, group))}/{len(group)}"


def success_table(runs: list[dict]) -> str:
    fixed = "fixed-precision " + "/".join(sorted({run["precision"] for run in runs
                                                  if run["precision"]}))
    lines = ["| language (theory depth) | depth | float: successes | float: exact match per seed "
             f"| float: validation >= 99% | {fixed}: successes | {fixed}: exact match per seed "
             f"| {fixed}: validation >= 99% |",
             "|---|---:|---:|---|---:|---:|---|---:|"]
    for language, depth in cells(runs):
        row = [f"{language} ({THEORY_DEPTH[language]})", str(depth)]
        for fixed in (False, True):
            group = members(runs, language, depth, fixed)
            row += [_count(group, _succeeds), ", ".join(_percent(run["exact_match"])
                                                        for run in group),
                    _count(group, _validates)]
        lines.append("| " + " | ".join(row) + " |")
    totals = []
    for fixed in (False, True):
        group = [run for run in runs if bool(run["precision"]) == fixed]
        totals += [_count(group, _succeeds), "", _count(group, _validates)]
    lines.append("| all | | " + " | ".join(totals) + " |")
    return "\n".join(lines) + "\n"


def decompile_table(runs: list[dict]) -> str:
    """Per cell, the fixed-precision runs by `crasp decompile`'s outcome."""
    outcomes = ["ok", "state budget", "cpu limit", "error", "not run"]
    lines = ["| language | depth | decompiled | refused: state budget | stopped: CPU limit "
             "| other error | not run | CPU s per seed | refused at |",
             "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for language, depth in cells(runs):
        group = members(runs, language, depth, True)
        counts = [sum(_outcome(run["step"]) == name for run in group) for name in outcomes]
        cpu = ", ".join(str(run["step"]["cpu_s"]) if run["step"] else "-" for run in group)
        refused = ", ".join(f"seed {run['seed']}: {_refusal(run['step'])}" for run in group
                            if _outcome(run["step"]) == "state budget")
        lines.append(f"| {language} | {depth} | " + " | ".join(map(str, counts))
                     + f" | {cpu} | {refused} |")
    group = [run for run in runs if run["precision"]]
    counts = [sum(_outcome(run["step"]) == name for run in group) for name in outcomes]
    lines.append("| all | | " + " | ".join(map(str, counts)) + " | | |")
    return "\n".join(lines) + "\n"


def depth_table(runs: list[dict]) -> str:
    """Every fixed-precision run that decompiled: its program's depth beside the others."""
    lines = ["| run | exact match | success | layers | program depth (depth-check) "
             "| theory depth | program depth >= theory depth |",
             "|---|---:|---|---:|---:|---:|---|"]
    for run in sorted((run for run in runs if run["precision"]), key=_run_order):
        depth = _program_depth(run["step"])
        if depth is None:
            continue
        theory = THEORY_DEPTH[run["language"]]
        lines.append(f"| {run['run']} | {_percent(run['exact_match'])} | "
                     f"{'yes' if run['success'] else 'no'} | {run['depth']} | {depth} | {theory} "
                     f"| {'yes' if depth >= theory else 'no'} |")
    return "\n".join(lines) + "\n"


def _run_order(run: dict) -> tuple:
    return (list(THEORY_DEPTH).index(run["language"]), run["depth"], run["seed"])


def _agreement(fidelity: dict, name: str) -> str:
    entry = fidelity.get(name)
    return "-" if entry is None else f"{_percent(entry['float']['agree'])}"


def extract_table(runs: list[dict], key: str = "step") -> str:
    """Every float run: crasp extract's precision, fidelity and depths (``key``: the run's
    extraction at the precision extract chose, or the one at the class's precision)."""
    lines = ["| run | exact match | extract | precision | fidelity (test bin) | skewed | extreme "
             "| strings agreeing (test bin) | program depth | nominal | effective | theory |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in sorted((run for run in runs if not run["precision"]), key=_run_order):
        step = run.get(key)
        cells_ = [run["run"], _percent(run["exact_match"]), _outcome(step), _read_at(step)]
        if step is not None and step["outcome"] == "ok":
            summary = step["summary"]
            fidelity = summary["fidelity"]
            test_bin = run["test_bin"]
            depth = summary["depth"]
            cells_ += [_agreement(fidelity, test_bin),
                       _agreement(fidelity, f"{test_bin}@skewed"),
                       _agreement(fidelity, f"{test_bin}@extreme"),
                       _percent(fidelity[test_bin]["float"]["strings_agree"]),
                       str(_program_depth(step)), str(depth["nominal"]),
                       "none" if depth["effective"] is None else str(depth["effective"]),
                       str(depth["theory"])]
        else:
            cells_ += ["-"] * 8
        lines.append("| " + " | ".join(cells_) + " |")
    return "\n".join(lines) + "\n"


def extract_at_class_precision_table(runs: list[dict]) -> str:
    return extract_table(runs, "step_at_class_precision")


def _verdict(equiv: dict | None, short: dict | None = None) -> str:
    if equiv is None:
        return "not run"
    if equiv["outcome"] == "cpu limit" and short is not None:
        return f"up to length {_length(equiv)}: stopped by the CPU limit; " + _verdict(short)
    result = equiv.get("result")
    if result == "proved":
        return "same answers at every length (proved)"
    if result == "unknown":
        return f"same answers up to length {_length(equiv)}; not proved beyond"
    if result == "counterexample":
        found = equiv["counterexample"]
        where = "the empty input" if found["length"] == 0 else \
            f"{found['string']} at position {found['position']}"
        return f"differs: {where}"
    if equiv["outcome"] == "cpu limit":
        return f"up to length {_length(equiv)}: stopped by the CPU limit"
    return equiv["outcome"]


def _length(equiv: dict) -> str:
    return equiv["command"].split("--max-length ")[1].split()[0]


def equiv_table(runs: list[dict]) -> str:
    """Every program written, against the language's own prediction program (crasp equiv):
    on every string, and on the prefixes of the language's strings (``--domain``), where the
    task specifies the answer."""
    lines = ["| run | program | success | program depth | against the language's program | "
             "on the task's strings |", "|---|---|---|---:|---|---|"]
    for run in sorted(runs, key=_run_order):
        for step in (run["step"], run.get("step_at_class_precision")):
            if step is None or step["outcome"] != "ok":
                continue
            program = step["command"].split(" -o ")[1].split()[0].rsplit("/", 1)[1]
            lines.append(f"| {run['run']} | {program} ({step['step']}) | "
                         f"{'yes' if run['success'] else 'no'} | {_program_depth(step)} | "
                         f"{_verdict(step.get('equiv'), step.get('equiv_short'))} | "
                         f"{_verdict(step.get('equiv_task'))} |")
    return "\n".join(lines) + "\n"


def cost_table(runs: list[dict]) -> str:
    """The study's compute: training wall time, and the CPU time of each kind of step."""
    rows = [("training (wall time, crasp sweep)", "runs",
             [run.get("train_wall_s") for run in runs])]
    for name, key, fixed in (("crasp decompile", "step", True), ("crasp extract", "step", False),
                             ("crasp extract --precision 6.2", "step_at_class_precision", False)):
        steps = [run.get(key) for run in runs if bool(run["precision"]) == fixed]
        rows.append((name, "steps", [step["cpu_s"] if step else None for step in steps]))
    for name, keys in (("crasp equiv", ("equiv", "equiv_short")),
                       ("crasp equiv --domain", ("equiv_task",))):
        checks = [step.get(check) for run in runs for key in ("step", "step_at_class_precision")
                  for step in [run.get(key)] if step for check in keys if step.get(check)]
        rows.append((name, "checks", [check["cpu_s"] for check in checks]))
    lines = ["| work | count | seconds in all | longest |", "|---|---:|---:|---:|"]
    for name, unit, seconds in rows:
        known = [value for value in seconds if value is not None]
        lines.append(f"| {name} | {len(known)} {unit} | {sum(known):,.0f} | "
                     f"{max(known, default=0):,.0f} |")
    return "\n".join(lines) + "\n"


TABLES = {"success": success_table, "decompile": decompile_table, "depths": depth_table,
          "extract": extract_table, "extractfixed": extract_at_class_precision_table,
          "equiv": equiv_table, "cost": cost_table}
BLOCK = re.compile(r"(<!-- table:(?P<name>[a-z]+) -->\n)(?P<body>.*?)(<!-- /table:(?P=name) -->)",
                   re.S)


def regenerated(document: str, runs: list[dict]) -> str:
    """``document`` with each marked table replaced by its regeneration from ``runs``."""
    return BLOCK.sub(lambda m: m.group(1) + TABLES[m["name"]](runs) + m.group(4), document)


def main(argv: list[str]) -> int:
    runs = load()
    if not argv:
        for name, table in TABLES.items():
            print(f"<!-- table:{name} -->\n{table(runs)}<!-- /table:{name} -->\n")
        return 0
    document = DOC.read_text(encoding="utf-8")
    new = regenerated(document, runs)
    if argv == ["--write"]:
        DOC.write_text(new, encoding="utf-8")
        return 0
    if argv == ["--check"]:
        return 0 if new == document else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
