"""Every run of the paper's exact grid, finished or stopped: validation exact match per epoch,
one panel per depth relative to k (k - 3 .. k). Prints per panel how many runs finished and
within how many epochs they fit, and how many did not finish and how far they had come, then
the share of runs that fit within N epochs with the unfinished ones censored
(``fit_by_epoch``); writes paper-runs.png.

    python docs/results/third-edition/paper_runs.py

Why: a lease's end cuts the runs still in flight and their cells are later started again from
scratch (docs/results/counts.py ``draws``, whose ``stopped_runs`` reads the same files), so
the finished cells alone hide the runs that stalled. The stopped runs are the metrics files of
RUNS, in the order the leases ran; a file whose rows begin a finished run's metrics.jsonl is
that run paused and resumed, drawn once. An unfinished cell's finished parts (a search run one
configuration at a time) are its run so far, one with a stopped file whose rows begin theirs
(``counts.part_runs``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
CELLS = HERE / "paper-grid" / "cells.csv"
RUNS = ["device-h200", "device-h100", "device-h200-2", "cpu-paper-grid", "device-h100-2",
        "cpu-paper-grid-2", "cpu-paper-grid-3", "cpu-paper-grid-4", "device-h200-3",
        "device-h200-4"]
OFFSETS = [-3, -2, -1, 0]

_spec = importlib.util.spec_from_file_location("counts", HERE.parent / "counts.py")
counts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(counts)


def runs() -> list[dict]:
    """One dict per run: language, depth, seed, finished, validation per epoch (the cells of
    cells.csv and the stopped runs ``counts.stopped_runs`` finds in RUNS)."""
    finished = counts.finished_cells(str(CELLS))
    stopped = counts.stopped_runs(finished, "paper-grid", [str(HERE / folder) for folder in RUNS],
                                  HERE / "records" / "paper-grid")
    every = [(key, True, counts.finished_metrics(row)) for key, row in finished.items()]
    every += [(key, False, epochs) for key, folders in stopped.items() for _, epochs in folders]
    return [{"language": language, "depth": depth, "seed": seed, "finished": done,
             "curve": [epoch.val_exact_match for epoch in epochs]}
            for (language, depth, seed), done, epochs in every]


def offset(run: dict) -> int:
    return run["depth"] - counts.k_of(run["language"])


def fits(run: dict) -> bool:
    """Whether the run reached 100% validation, the paper's stopping rule (a finished run that
    did not fit has tried every configuration, and its cell is their best on validation)."""
    return max(run["curve"]) >= 1.0


def fitted(run: dict) -> bool:
    """A finished run that fit validation (not one that tried every configuration)."""
    return run["finished"] and fits(run)


def depth_name(shift: int) -> str:
    return f"k - {-shift}" if shift else "k"


def table(every: list[dict]) -> list[str]:
    lines = []
    for shift in OFFSETS:
        here = [run for run in every if offset(run) == shift]
        done = [len(run["curve"]) for run in here if fitted(run)]
        searched = [run for run in here if run["finished"] and not fits(run)]
        cut = [run for run in here if not run["finished"]]
        name = depth_name(shift)
        text = f"{name}: {len(done)} finished"
        if done:
            text += f" (fit in {min(done)} to {max(done)} epochs)"
        if searched:
            epochs = ", ".join(str(len(run["curve"])) for run in searched)
            best = ", ".join(f"{100 * max(run['curve']):.1f}" for run in searched)
            text += (f", {len(searched)} finished without fitting (every configuration tried: "
                     f"{epochs} epochs, best validation {best}%)")
        text += f", {len(cut)} not finished"
        if cut:
            epochs = [len(run["curve"]) for run in cut]
            best = [100 * max(run["curve"]) for run in cut]
            text += (f" (after {min(epochs)} to {max(epochs)} epochs, best validation "
                     f"{min(best):.1f} to {max(best):.1f}%)")
        lines.append(text)
    return lines


MARKS = (1, 2, 3, 5, 10, 25, 50, 100)
"""The epochs at which ``fit_by_epoch`` gives the estimated share of runs that have fit."""
MIN_AT_RISK = 5
"""The estimate is shown only while at least this many runs reached the epoch: with one run
left, its fitting alone would send the share to 100%."""


def share_fit(runs: list[dict]) -> list[tuple[float, int]]:
    """The Kaplan-Meier estimate of the share of ``runs`` that fit validation within e epochs
    (over the configurations, in order), for e = 1 .. the longest run: a run that fit is an
    event at its last epoch; one cut, paused or finished without fitting is *censored* there
    (known not to have fit in its epochs, unknown after). The share is 1 - S(e), S(e) the
    product over the epochs up to e of (1 - fit(e) / at_risk(e)), at_risk(e) the runs that ran
    at least e epochs. It takes every run as an independent draw of one run: second draws of a
    cell, and the cells and seeds of a depth, pooled. Each share comes with at_risk(e)."""
    observed = [(len(run["curve"]), fitted(run)) for run in runs]
    survival, shares = 1.0, []
    for epoch in range(1, max(length for length, _ in observed) + 1):
        at_risk = sum(1 for length, _ in observed if length >= epoch)
        fit = sum(1 for length, event in observed if event and length == epoch)
        survival *= 1 - fit / at_risk
        shares.append((1 - survival, at_risk))
    return shares


def fit_by_epoch(every: list[dict]) -> list[str]:
    """Per depth, ``share_fit`` at each of MARKS epochs, with the runs that reached it; "-"
    where fewer than MIN_AT_RISK did."""
    lines = ["fit validation within N epochs (Kaplan-Meier, unfinished runs censored; in "
             f"brackets the runs that reached epoch N; - under {MIN_AT_RISK}), N = "
             + ", ".join(map(str, MARKS))]
    for shift in OFFSETS:
        here = [run for run in every if offset(run) == shift]
        shares = share_fit(here)
        estimates = [f"{100 * shares[mark - 1][0]:.1f}% ({shares[mark - 1][1]})"
                     if mark <= len(shares) and shares[mark - 1][1] >= MIN_AT_RISK else "-"
                     for mark in MARKS]
        events = sum(1 for run in here if fitted(run))
        name = depth_name(shift)
        lines.append(f"{name}: {', '.join(estimates)} ({len(here)} run"
                     f"{'s' * (len(here) != 1)}: {events} fit, {len(here) - events} censored)")
    return lines


def summary(every: list[dict]) -> list[str]:
    """What the script prints: ``table``, then ``fit_by_epoch``."""
    return table(every) + fit_by_epoch(every)


def colour(run: dict) -> str:
    return ("C2" if fits(run) else "C0") if run["finished"] else "C3"


def main() -> None:
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    every = runs()
    print("\n".join(summary(every)))
    figure, panels = plt.subplots(1, len(OFFSETS), figsize=(12, 3.8), sharex=True, sharey=True)
    styles = {"L6": "-", "L7": "--", "L8": ":"}
    for panel, shift in zip(panels, OFFSETS):
        for run in (run for run in every if offset(run) == shift):
            epochs = range(1, len(run["curve"]) + 1)
            panel.plot(epochs, [100 * value for value in run["curve"]],
                       styles[run["language"]], color=colour(run),
                       alpha=0.8, lw=1.2, marker="o" if len(run["curve"]) == 1 else None, ms=3)
        panel.axvline(25.5, color="0.7", lw=0.8)   # the first configuration's 25 epochs end
        panel.set_title(f"depth {depth_name(shift)}", fontsize=10)
        panel.set_xscale("log")
        panel.set_xticks([1, 2, 5, 10, 25, 50, 100], ["1", "2", "5", "10", "25", "50", "100"])
        panel.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    panels[0].set_ylabel("validation exact match (%)")
    figure.supxlabel("epoch, over the configurations tried in order (grey line: the first "
                     "configuration's 25 epochs end)", fontsize=9, y=0.14)
    handles = [plt.Line2D([], [], color="C2",
                          label="finished: fit validation (the cell's record)"),
               plt.Line2D([], [], color="C0", label="finished without fitting: every "
                          "configuration tried"),
               plt.Line2D([], [], color="C3",
                          label="not finished: cut at a lease's end, paused, or parts so far"),
               *(plt.Line2D([], [], color="0.3", ls=style, label=language)
                 for language, style in styles.items())]
    figure.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    figure.suptitle("The paper's exact grid (one head, batch 1): every run's validation exact "
                    "match per epoch", fontsize=11)
    figure.tight_layout(rect=(0, 0.14, 1, 1))
    figure.savefig(HERE / "paper-runs.png", dpi=130)
    plot_share_fit(every, plt)


def plot_share_fit(every: list[dict], plt) -> None:
    """paper-fit-by-epoch.png: ``share_fit`` per depth, as steps over the epochs."""
    figure, axes = plt.subplots(figsize=(7, 4))
    for colour_index, shift in enumerate(OFFSETS):
        here = [run for run in every if offset(run) == shift]
        shares = [share for share, at_risk in share_fit(here) if at_risk >= MIN_AT_RISK]
        name = depth_name(shift)
        levels = [100 * share for share in shares]
        axes.step(range(1, len(shares) + 2), levels + levels[-1:], where="post",
                  color=f"C{colour_index}", label=f"depth {name} ({len(here)} runs)")
    axes.axvline(25, color="0.7", lw=0.8)
    axes.set_xscale("log")
    axes.set_xticks([1, 2, 5, 10, 25, 50, 100], ["1", "2", "5", "10", "25", "50", "100"])
    axes.set_ylim(-2, 102)
    axes.set_xlabel("epochs, over the configurations tried in order (grey: the first's 25 end)")
    axes.set_ylabel("runs that fit validation (%)")
    axes.set_title("The paper's exact grid: share of runs that fit validation within N epochs\n"
                   "(Kaplan-Meier; runs cut or paused count up to the epoch they reached;\n"
                   f"each line ends where fewer than {MIN_AT_RISK} runs reached the epoch)",
                   fontsize=10)
    axes.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    figure.savefig(HERE / "paper-fit-by-epoch.png", dpi=130)


if __name__ == "__main__":
    main()
