"""Report pass 3d: a summary line -> its sentence (the smallest depth where the seeds reach the
threshold, the theory's bound and the compiled program), shared by ``report.json`` (``contents``)
and ``report.md`` (``markdown``).
"""

from __future__ import annotations

from typing import Mapping

from crasp.errors import CraspError
from crasp.languages.datasets import parse_test_bin
from crasp.train.report.ordering import architecture_name
from crasp.train.sweep import parse_bin


def bin_label(name: str | None) -> str:
    """``351:400`` -> ``[351, 400]``, ``351:400@skewed`` -> ``[351, 400] skewed``."""
    if name and "@" in name:
        try:
            lo, hi, distribution = parse_test_bin(name)
        except CraspError:  # not a bin name: say so rather than guess
            return name
        return f"[{lo}, {hi}] {distribution}"
    bounds = parse_bin(name) if name else None
    return f"[{bounds[0]}, {bounds[1]}]" if bounds else "the longest bin"


def _bound_text(bound: Mapping | None) -> str:
    if not bound:
        return "no proved bound"
    if bound["lower"] == bound["upper"]:
        return f"depth {bound['upper']} (proved)"
    return f"depth {bound['lower']}–{bound['upper']} (proved range; {bound['upper']} conjectured)"


def _compiled_text(line: Mapping) -> str:
    status = line.get("compiled_status")
    if status is None:  # the report was asked not to compile (--no-compiled)
        return "not scored"
    if status == "no program":
        return "none"
    if status == "ok":
        verdict = ("exact fixed-precision model: " + ("100% on every bin"
                   if line.get("compiled_all_perfect") else "NOT 100% on every bin"))
        return f"depth {line['compiled_depth']} ({verdict})"
    if line.get("compiled_depth") is not None:
        return f"depth {line['compiled_depth']}, {status}"
    return status


def summary_text(line: Mapping) -> str:
    pct = f"{100 * line['threshold']:g}%"
    tried = line["depths_tried"]
    span = f"depths {min(tried)}–{max(tried)}" if tried else "no depths"

    def depth(value):
        return f"depth {value}" if value is not None else f"none of {span}"

    fewest = line.get("seeds_min", line["seeds"])
    if fewest != line["seeds"]:
        seeds = f"every seed ({fewest} to {line['seeds']} per depth) reaches"
    else:
        seeds = f"all {line['seeds']} seeds reach" if line["seeds"] != 1 else "the one seed reaches"
    text = (f"{line['language']} [{architecture_name(line['posenc'])}]: "
            f"smallest depth where {seeds} ≥ {pct} exact match on "
            f"{bin_label(line['bin'])}: {depth(line['smallest_depth_all_seeds'])}; "
            f"majority of seeds: {depth(line['smallest_depth_majority'])}; "
            f"theory: {_bound_text(line.get('theory_bound'))}; "
            f"compiled program: {_compiled_text(line)}")
    if line["fails_above_smallest"]:
        text += ("; not monotone (fails again at depth "
                 f"{', '.join(map(str, line['fails_above_smallest']))})")
    return text
