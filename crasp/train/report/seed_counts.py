"""Report pass 3c: the selected setting of each (encoding, language, depth) -> how many of its
seeds length-generalize, and whether a single string would change that count ("fragile").

A seed succeeds when its exact match on the longest test bin reaches the threshold. The bin
holds ``n`` strings, so the exact match moves in steps of ``1/n``: with ``c`` strings right, a
seed is *fragile* when one string more or less would carry it across the threshold, that is
when it succeeds but ``(c - 1)/n`` falls below the threshold, or fails but ``(c + 1)/n``
reaches it. (With ``n = 500`` and the threshold 0.99: 495 right succeeds and is fragile, 494
right fails and is fragile, 496 and 493 are not.) The count "s of m" is fragile when any of its
seeds is; the majority verdict (``2s > m``) and the all-seeds verdict (``s = m``) are fragile
when moving one fragile seed to the other side flips them, which is what a reader of "the
majority depth" needs to know. A seed whose bin does not record ``n`` is never marked.

The counts are those of the setting the report selected for the cell (``aggregate``): with one
setting per cell, as in crasp's sweeps, the seeds of the cell.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from crasp.train.report.aggregate import Aggregate
from crasp.train.report.loading import CellResult
from crasp.train.sweep import canonical_json

FRAGILE_COUNT = "†"
FRAGILE_VERDICT = "‡"


def seed_entry(cell: CellResult, threshold: float) -> dict:
    """One seed: its exact match, strings right of the bin's, success, and fragility."""
    value = cell.long_exact_match
    score = cell.results.bins.get(cell.long_bin)
    strings = score.n if score is not None else None
    succeeds = value >= threshold
    correct = fragile = None
    if strings:
        correct = round(value * strings)
        fragile = ((correct - 1) / strings < threshold if succeeds
                   else (correct + 1) / strings >= threshold)
    return {"seed": cell.seed, "id": cell.id, "exact_match": value, "correct": correct,
            "strings": strings, "succeeds": succeeds, "fragile": bool(fragile)}


def count_entry(posenc: str, language: str, depth: int, chosen: Aggregate,
                members: Sequence[CellResult], threshold: float) -> dict:
    seeds = [seed_entry(cell, threshold) for cell in sorted(members, key=lambda c: c.seed)]
    total = len(seeds)
    successes = sum(seed["succeeds"] for seed in seeds)
    fragile_pass = any(seed["fragile"] and seed["succeeds"] for seed in seeds)
    fragile_fail = any(seed["fragile"] and not seed["succeeds"] for seed in seeds)

    def flips(verdict) -> bool:
        now = verdict(successes)
        return ((fragile_pass and verdict(successes - 1) != now)
                or (fragile_fail and verdict(successes + 1) != now))

    majority, every = (lambda s: 2 * s > total), (lambda s: s == total)
    return {"posenc": posenc, "language": language, "depth": depth, "setting": chosen.hyper,
            "bin": chosen.bin, "threshold": threshold, "successes": successes, "seeds_run": total,
            "text": f"{successes} of {total}",
            "fragile": fragile_pass or fragile_fail,
            "majority": majority(successes), "majority_fragile": flips(majority),
            "all": every(successes), "all_fragile": flips(every),
            "fragile_seeds": [seed for seed in seeds if seed["fragile"]], "seeds": seeds}


def seed_counts(cells: Sequence[CellResult],
                table: Mapping[str, Mapping[str, Mapping[int, Aggregate]]],
                threshold: float) -> list[dict]:
    """One ``count_entry`` per (encoding, language, depth) of ``table``, in its order."""
    groups: dict[tuple, list[CellResult]] = {}
    for cell in cells:
        if cell.long_exact_match is not None:
            key = (cell.architecture, cell.language, cell.depth, cell.hyper_key)
            groups.setdefault(key, []).append(cell)
    counts = []
    for posenc, languages in table.items():
        for language, depths in languages.items():
            for depth, chosen in depths.items():
                members = groups.get((posenc, language, depth, canonical_json(chosen.hyper)),
                                     [])
                counts.append(count_entry(posenc, language, depth, chosen, members, threshold))
    return counts


def count_text(entry: Mapping) -> str:
    """``3/5``, with † when one string would change the count and ‡ when it would change the
    majority or all-seeds verdict."""
    mark = ""
    if entry["fragile"]:
        mark = FRAGILE_VERDICT if entry["majority_fragile"] or entry["all_fragile"] \
            else FRAGILE_COUNT
    return f"{entry['successes']}/{entry['seeds_run']}{mark}"


def seed_count_lines(counts: Sequence[Mapping], depths: Sequence[int], bin_text: str
                     ) -> list[str]:
    """The Markdown table of one encoding's counts (languages x depths); ``bin_text`` names
    the longest bin."""
    if not counts:
        return []
    rows: dict[str, dict[int, Mapping]] = {}
    for entry in counts:
        rows.setdefault(entry["language"], {})[entry["depth"]] = entry
    first = counts[0]
    lines = [f"Seeds that reach ≥ {100 * first['threshold']:g}% on {bin_text} "
             f"(of the seeds run); {FRAGILE_COUNT}: one string more or less right in one seed "
             f"would change the count; {FRAGILE_VERDICT}: it would also change the majority or "
             "the all-seeds verdict (`seed_counts` in report.json names the seeds):", "",
             "| language | " + " | ".join(f"d{d}" for d in depths) + " |",
             "|---|" + "---:|" * len(depths)]
    for language, by_depth in rows.items():
        lines.append(f"| {language} | " + " | ".join(
            count_text(by_depth[d]) if d in by_depth else "–" for d in depths) + " |")
    return lines + [""]
