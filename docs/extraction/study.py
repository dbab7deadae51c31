"""The steps of docs/extraction.md after training, and the collection of their results.

    python docs/extraction/study.py steps RUNS OUT     (resumable: a step whose report exists
                                                        is skipped)
    python docs/extraction/study.py collect RUNS OUT   (writes OUT/results.json)
    python docs/extraction/study.py task OUT           (the check on the task's strings; needs
                                                        only OUT: steps and programs)

``steps`` runs, for every finished run under RUNS/<language>/cells/ (ordered by depth, then
language, then seed, so that the cheap cells come first):

* a fixed-precision run (``precision`` set): ``crasp decompile RUN -o OUT/programs/<run>.crasp
  --json`` at the default --max-states;
* a float run: ``crasp extract RUN -o OUT/programs/<run>.crasp --json``, and, after every run
  has had its step, ``crasp extract RUN -o OUT/programs/<run>.p6.2.crasp --precision 6.2
  --json`` (``EXTRACT_AT``: the fixed-precision runs' precision, where extract's own choice
  is refused);

then ``crasp depth-check --json`` on the program written, and once every run has had its
steps, ``crasp equiv PROGRAM crasp/programs/<language>_predict.crasp --unbounded`` on each
program (``equivalences``); ``task`` runs the same check with ``--domain
crasp/programs/<language>_prefixes.crasp``, on the prefixes of the language's strings only,
where the task specifies the answer (``task_equivalences``). Each command runs under a limit of
CPU time (``CPU_LIMIT_S``: the readable-program pass that follows the decompilation is not
charged to --max-states, and on this shared machine one run's pass took minutes), and its
report, with the command line, exit status, CPU seconds, the limit and the outcome, goes to
OUT/steps/<run>.json. A step stopped by a lower limit than today's is run again. ``collect``
joins those reports with each run's config.json and results.json into OUT/results.json, the
one file docs/extraction/tables.py reads.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

CPU_LIMIT_S = 600
FIRST_PASS_CPU_LIMIT_S = 120     # the limit of the reports written before the limit was raised
EQUIV_LENGTH = 16               # crasp equiv's base case: every string up to this length
EQUIV_CPU_LIMIT_S = 120
EQUIV_SHORT_LENGTH = 10         # where the CPU limit stopped the check up to EQUIV_LENGTH
EXTRACT_AT = "6.2"               # the fixed-precision class's: every float run is read at it too
EXTRACT_AT_CPU_LIMIT_S = 150     # its limit: the study's time ran short
SUCCESS = 0.99          # crasp report's threshold: exact match on the longest test bin
STATE_BUDGET_MESSAGE = "too many states to decompile"


def finished_runs(runs: Path) -> list[Path]:
    cells = [cell for cell in runs.glob("*/cells/*") if (cell / "results.json").exists()]
    return sorted(cells, key=lambda cell: _order(json.loads((cell / "config.json").read_text())))


def _order(config: dict) -> tuple:
    return (config["depth"], config["language"], config["seed"], config.get("precision") or "")


def run_command(command: list[str], cpu_limit_s: int = CPU_LIMIT_S) -> dict:
    """``command``'s exit status, CPU seconds, standard output and first error line."""
    def limit_cpu() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit_s, cpu_limit_s + 5))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=limit_cpu)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    error = done.stderr.strip().splitlines()
    return {"command": " ".join(command), "rc": done.returncode, "cpu_s": round(cpu, 1),
            "stdout": done.stdout, "error": error[0] if error else None}


def outcome(result: dict) -> str:
    if result["rc"] == 0:
        return "ok"
    if result["rc"] == 2 and STATE_BUDGET_MESSAGE in (result["error"] or ""):
        return "state budget"
    if result["rc"] in (-signal.SIGXCPU, -signal.SIGKILL):   # the soft and the hard limit
        return "cpu limit"
    return "error"


def step(cell: Path, out: Path, precision: str | None = None) -> dict:
    """The run's decompilation or extraction (read at ``precision`` if given) and the depth of
    the program written."""
    cpu_limit_s = EXTRACT_AT_CPU_LIMIT_S if precision else CPU_LIMIT_S
    config = json.loads((cell / "config.json").read_text())
    program = out / "programs" / f"{cell.name}{_suffix(precision)}.crasp"
    verb = "decompile" if config.get("precision") else "extract"
    chosen = ["--precision", precision] if precision else []
    result = run_command(["crasp", verb, str(cell), "-o", str(program), *chosen, "--json",
                          "--force"], cpu_limit_s)
    report = {"run": cell.name, "step": verb, "command": result["command"], "rc": result["rc"],
              "cpu_s": result["cpu_s"], "cpu_limit_s": cpu_limit_s, "outcome": outcome(result),
              "error": result["error"]}
    if report["outcome"] == "ok":
        summary = json.loads(result["stdout"])
        summary.get("decompile", summary).pop("depths", None)   # per definition: in the program
        report["summary"] = summary
        checked = run_command(["crasp", "depth-check", str(program), "--json"])
        report["depth_check"] = {"command": checked["command"], "rc": checked["rc"],
                                 "depth": json.loads(checked["stdout"])["depth"]}
    return report


def _suffix(precision: str | None) -> str:
    return f".p{precision}" if precision else ""


def stopped_below_limit(report: dict, limit: int) -> bool:
    return (report["outcome"] == "cpu limit"
            and report.get("cpu_limit_s", FIRST_PASS_CPU_LIMIT_S) < limit)


def steps(runs: Path, out: Path) -> None:
    (out / "programs").mkdir(parents=True, exist_ok=True)
    (out / "steps").mkdir(parents=True, exist_ok=True)
    cells = finished_runs(runs)
    floats = [cell for cell in cells
              if not json.loads((cell / "config.json").read_text()).get("precision")]
    for cell, precision in [(cell, None) for cell in cells] + [(cell, EXTRACT_AT)
                                                               for cell in floats]:
        target = out / "steps" / f"{cell.name}{_suffix(precision)}.json"
        limit = EXTRACT_AT_CPU_LIMIT_S if precision else CPU_LIMIT_S
        if target.exists() and not stopped_below_limit(json.loads(target.read_text()), limit):
            continue
        report = step(cell, out, precision)
        print(f"{target.stem}: {report['step']} {report['outcome']} ({report['cpu_s']} s CPU)",
              flush=True)
        _write_report(target, report)
    equivalences(runs, out)


def equivalence(program: Path, language: str, length: int, on_the_task: bool = False) -> dict:
    """Whether ``program`` answers as the language's own prediction program at every position
    of every string over its alphabet (``on_the_task``: of every prefix of a string of the
    language, where the task specifies the answer, ``crasp equiv --domain``): up to
    ``length``, and for every length where k-induction proves it."""
    reference = f"crasp/programs/{language}_predict.crasp"
    alphabet = "a b e" if language.startswith("E") else "a b"
    domain = ["--domain", f"crasp/programs/{language}_prefixes.crasp"] if on_the_task else []
    result = run_command(["crasp", "equiv", str(program), reference, "--alphabet", alphabet,
                          "--max-length", str(length), "--unbounded", *domain, "--json"],
                         EQUIV_CPU_LIMIT_S)
    answer = {"command": f"crasp equiv {program} {reference} --alphabet \"{alphabet}\" "
                         f"--max-length {length} --unbounded {' '.join(domain + [''])}--json",
              "rc": result["rc"], "cpu_s": result["cpu_s"], "outcome": outcome(result)}
    if result["stdout"]:
        verdict = json.loads(result["stdout"])
        answer["result"] = verdict["result"]
        answer["counterexample"] = verdict["counterexample"]
    return answer


def equivalences(runs: Path, out: Path) -> None:
    """The equivalence check of every program written, once (added to its step's report as
    ``equiv``), and where the CPU limit stopped it, once more up to EQUIV_SHORT_LENGTH
    (``equiv_short``)."""
    for cell in finished_runs(runs):
        language = json.loads((cell / "config.json").read_text())["language"]
        for path in sorted((out / "steps").glob(f"{cell.name}*.json")):
            report = json.loads(path.read_text())
            if report["outcome"] != "ok" or report["run"] != cell.name:
                continue
            if "equiv" not in report:
                key, length = "equiv", EQUIV_LENGTH
            elif report["equiv"]["outcome"] == "cpu limit" and "equiv_short" not in report:
                key, length = "equiv_short", EQUIV_SHORT_LENGTH
            else:
                continue
            report[key] = equivalence(_program_of(report), language, length)
            print(f"{path.stem}: {key} {report[key].get('result', report[key]['outcome'])}",
                  flush=True)
            _write_report(path, report)


def task_equivalences(out: Path) -> None:
    """The equivalence check on the task's strings (``equiv_task``) of every program that has
    had the check on every string, once; then ``results.json`` takes the step reports again.
    Needs only what is committed (the step reports and the programs)."""
    for path in sorted((out / "steps").glob("*.json")):
        report = json.loads(path.read_text())
        if "equiv" not in report or "equiv_task" in report:
            continue
        language = report["run"].split("-")[0]
        report["equiv_task"] = equivalence(_program_of(report), language, EQUIV_LENGTH,
                                           on_the_task=True)
        print(f"{path.stem}: equiv_task "
              f"{report['equiv_task'].get('result', report['equiv_task']['outcome'])}",
              flush=True)
        _write_report(path, report)
    target = out / "results.json"
    results = json.loads(target.read_text())
    for row in results["runs"]:
        row.update(_step_reports(out, row["run"], row["precision"]))
    target.write_text(json.dumps(results, indent=1) + "\n")


def _program_of(report: dict) -> Path:
    """The program a step wrote (its command's ``-o``)."""
    return Path(report["command"].split(" -o ")[1].split()[0])


def _write_report(path: Path, report: dict) -> None:
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(report, indent=1) + "\n")
    os.replace(partial, path)


def _report(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def _step_reports(out: Path, run: str, precision: str | None) -> dict:
    """A run's step reports, as results.json holds them (a float run's also at EXTRACT_AT)."""
    return {"step": _report(out / "steps" / f"{run}.json"),
            "step_at_class_precision": None if precision else
            _report(out / "steps" / f"{run}{_suffix(EXTRACT_AT)}.json")}


def collect(runs: Path, out: Path) -> None:
    rows = []
    for cell in finished_runs(runs):
        config = json.loads((cell / "config.json").read_text())
        results = json.loads((cell / "results.json").read_text())
        longest = max(results["bins"], key=lambda name: int(name.split("@")[0].split(":")[1]))
        exact = results["bins"][longest]["exact_match"]
        rows.append({"run": cell.name, "language": config["language"], "depth": config["depth"],
                     "seed": config["seed"], "precision": config.get("precision"),
                     "test_bin": longest, "exact_match": exact, "success": exact >= SUCCESS,
                     "val_exact_match": results["val_exact_match"], "epochs": results["epochs"],
                     "train_wall_s": results.get("wall_time_s"),
                     **_step_reports(out, cell.name, config.get("precision"))})
    target = out / "results.json"
    target.write_text(json.dumps({"success_threshold": SUCCESS, "cpu_limit_s": CPU_LIMIT_S,
                                  "runs": rows}, indent=1) + "\n")
    print(f"{len(rows)} runs -> {target}")


def main(argv: list[str]) -> None:
    if argv[0] == "task":   # task OUT
        task_equivalences(Path(argv[1]))
        return
    command, runs, out = argv
    {"steps": steps, "collect": collect}[command](Path(runs), Path(out))


if __name__ == "__main__":
    main(sys.argv[1:])
