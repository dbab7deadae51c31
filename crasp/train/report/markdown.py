"""Report pass 4a: a ``Report`` -> ``report.md`` (tables, summary lines, theory checks).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

from crasp.languages.datasets import parse_test_bin
from crasp.train.sweep import canonical_json, parse_bin
from crasp.train.theory_bounds import DepthBound, bounded_architecture, depth_bound
from crasp.train.report.aggregate import Aggregate, mean_std
from crasp.train.report.contents import Report
from crasp.train.report.distributions import totals
from crasp.train.report.loading import UNRECORDED_CODE, code_versions, commands, wall_time
from crasp.train.report.ordering import architecture_name
from crasp.train.report.summary import bin_label, summary_text
from crasp.train.report.search_choices import search_choice_lines
from crasp.train.report.seed_counts import seed_count_lines
from crasp.train.report.unfinished import unfinished_lines


def pct(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * value:.{digits}f}"


def seeds_text(values: Sequence[float], threshold: float | None = None) -> str:
    """Mean with its sample standard deviation and seed count; one seed shows no deviation.
    With a threshold, also how many seeds reach it: a mean of 96% over five seeds can be four
    successes or none, and the boundary is read from the successes."""
    count = f"n={len(values)}"
    if threshold is not None:
        count += f"; {sum(v >= threshold for v in values)} ≥ {100 * threshold:g}%"
    if len(values) == 1:
        return f"{pct(values[0])} ({count})"
    mean, std = mean_std(values)
    return f"{pct(mean)} ± {pct(std)} ({count})"


def bound_cell(bound: DepthBound | None) -> str:
    if bound is None:
        return "–"
    return str(bound.upper) if bound.exact else f"{bound.lower}–{bound.upper}"


def _compiled_cell(reference: Mapping | None, bin_name: str | None) -> str:
    if not reference or reference.get("status") in (None, "no program"):
        return "–"
    status = reference["status"]
    if status != "ok":
        return status if status.startswith("n/a") else "error"
    bins = reference.get("bins") or {}
    value = bins.get(bin_name) if bin_name in bins else None
    if value is None and bins:
        value = bins[max(bins, key=lambda n: (parse_bin(n) or (0, 0))[::-1])]
    score = pct(value["exact_match"]) if value else "–"
    return f"{score} (d{reference['depth']})"


def theory_check_lines(checks: Sequence[Mapping]) -> list[str]:
    """Markdown bullets: the counts, then every cell on the wrong side of the bound by name
    (below it and succeeding, at or above it and failing), so each count can be traced."""
    lines = []
    for check in checks:
        bound = check["bound"]
        name = f"{check['language']} [{architecture_name(check['posenc'])}]"
        for criterion, label in (("long", f"≥ {100 * check['threshold']:g}% on the longest bin"),
                                 ("val", "100% validation")):
            wins = check["below_bound_succeed"][criterion]
            losses = check["at_or_above_bound_fail"][criterion]
            text = (f"- {name}, {label}: {len(wins)} of {check['cells_below']} cells below depth "
                    f"{bound['lower']} succeed")
            closest = check.get("closest_below", {}).get(criterion)
            if closest and not wins:
                text += (f" (closest below: d{closest['depth']} s{closest['seed']}, "
                         f"{pct(closest['long_exact_match'])} long, "
                         f"{pct(closest['val_exact_match'])} val)")
            text += (f"; {len(losses)} of {check['cells_at_or_above']} cells at depth ≥ "
                     f"{bound['upper']} fail")
            between = check.get("between_bounds_succeed", {}).get(criterion, [])
            if bound["lower"] < bound["upper"]:
                span = (f"depth {bound['lower']}" if bound["upper"] - bound["lower"] == 1
                        else f"depths {bound['lower']}–{bound['upper'] - 1}")
                text += (f"; unproved {span}: {len(between)} of {check['cells_between']} "
                         f"cells succeed (the conjecture: none)")
            for side, listed in (("below the bound", wins), ("failing at or above", losses),
                                 ("succeeding where unproved", between)):
                if listed:
                    text += f" — {side}: " + ", ".join(
                        f"d{c['depth']} s{c['seed']} ({pct(c['long_exact_match'])} long, "
                        f"{pct(c['val_exact_match'])} val)" for c in listed)
            lines.append(text)
    return lines


def distribution_check_lines(checks: Sequence[Mapping]) -> list[str]:
    """Markdown bullets: per distribution bin, the total over languages, then per language how
    many cells that length-generalize on the uniform bin do so on the distribution's bin, and
    the others by name with both scores."""
    threshold = f"{100 * checks[0]['threshold']:g}%"
    lines = [f"Cells that reach ≥ {threshold} on {bin_label(checks[0]['uniform_bin'])} (every "
             "seed and setting), and how many of them reach it on each harder distribution "
             "(crasp.train.report.distributions):", ""]
    name = architecture_name(checks[0]["posenc"])
    for (_, bin_name), (passing, also) in totals(checks).items():
        lines.append(f"- {name}, {bin_label(bin_name)}: {also} of {passing} cells, over all "
                     "languages")
    for check in checks:
        text = (f"- {check['language']} [{name}], {bin_label(check['bin'])}: "
                f"{check['also_passing']} of {check['passing_uniform']}")
        if check["failing"]:
            text += " — below: " + ", ".join(
                f"d{c['depth']} s{c['seed']} ({pct(c['uniform_exact_match'])} → "
                f"{pct(c['exact_match'])})" for c in check["failing"])
        lines.append(text)
    return lines


def budget_loss_lines(losses: Sequence[Mapping]) -> list[str]:
    """Markdown bullets for one encoding: the total, then per language how many cells reach the
    threshold on the longest bin at some budget and how many of those miss it at the report's
    budget, the latter by name with the reading at their last succeeding budget and at the
    report's (validation beside each)."""
    first = losses[0]
    at = (f"{first['budget']} epochs" if first["budget"] is not None
          else "their final budget")
    name = architecture_name(first["posenc"])
    lines = [f"Successes that a larger budget loses: cells that reach ≥ "
             f"{100 * first['threshold']:g}% on the longest bin at some budget and miss it at "
             f"{at}, where a checkpoint that validates better generalizes worse "
             "(crasp.train.report.budget_losses; 100% validation, the paper's criterion, cannot "
             "be lost):", "",
             f"- {name}: {sum(len(g['lost']) for g in losses)} of "
             f"{sum(g['reached'] for g in losses)} cells, over all languages (of "
             f"{sum(g['cells_read'] for g in losses)} with per-epoch test records)"]
    for group in losses:
        text = f"- {group['language']} [{name}]: {len(group['lost'])} of {group['reached']}"
        if group["lost"]:
            text += " — " + ", ".join(
                f"d{c['depth']} s{c['seed']} ({pct(c['exact_match_at_success'])} long, "
                f"{pct(c['val_exact_match_at_success'])} val at {c['last_success']} epochs → "
                f"{pct(c['exact_match_at_final'])} long, {pct(c['val_exact_match_at_final'])} "
                f"val at {c['final_budget']})" for c in group["lost"])
        lines.append(text)
    return lines


def markdown_table(posenc: str, languages: Mapping[str, Mapping[int, Aggregate]],
                   depths: Sequence[int], compiled: Mapping[str, dict], threshold: float,
                   select: str = "val") -> str:
    bins = {a.bin for ds in languages.values() for a in ds.values()}
    bin_text = bin_label(next(iter(bins))) if len(bins) == 1 else "the longest test bin"
    chosen_by = ("validation exact match" if select == "val"
                 else "exact match on the longest TEST bin (selected on test data)")
    lines = [
        f"### {architecture_name(posenc)}: exact match (%) on {bin_text}",
        "",
        f"Per cell the hyperparameter setting with the best mean {chosen_by}; mean ± sample "
        f"standard deviation over its seeds, the number of seeds n (one seed: no deviation) and "
        f"how many of them reach ≥ {100 * threshold:g}%. "
        f"**Bold**: every seed of some setting reaches ≥ {100 * threshold:g}%. *theory*: the "
        "depth a theorem fixes (a range where only bounds are proved; – where none is known, "
        "crasp.train.theory_bounds); *compiled*: the compiled reference program's exact match on "
        "the same bin, at its depth, in crasp's exact fixed-precision executor (floor rounding).",
        "",
        "| language | theory | " + " | ".join(f"depth {d}" for d in depths) + " | compiled |",
        "|---|---:|" + "---:|" * len(depths) + "---:|",
    ]
    for language, by_depth in languages.items():
        cells = []
        for depth in depths:
            entry = by_depth.get(depth)
            if entry is None:
                cells.append("–")
                continue
            text = seeds_text(entry.values, threshold)
            cells.append(f"**{text}**" if entry.all_pass else text)
        bin_name = next(iter(by_depth.values())).bin if by_depth else None
        lines.append(f"| {language} | {bound_cell(depth_bound(language, posenc))} | "
                     + " | ".join(cells)
                     + f" | {_compiled_cell(compiled.get(language), bin_name)} |")
    hypers = [a.hyper for ds in languages.values() for a in ds.values()]
    varying = sorted({k for h in hypers for k in h
                      if len({canonical_json(x.get(k)) for x in hypers}) > 1})
    settings = max((a.settings for ds in languages.values() for a in ds.values()), default=1)
    if settings > 1 or varying:
        lines.append("")
        lines.append(f"Up to {settings} grid points per cell; the chosen one differs between cells "
                     f"in: {', '.join(varying) or 'nothing'} (per cell in report.json, "
                     "`tables.<encoding>.<language>.<depth>.hyper`).")
    return "\n".join(lines) + "\n"


def distribution_table(tables: Mapping[str, Mapping[str, Mapping[int, Aggregate]]],
                       depths: Sequence[int], threshold: float, posenc: str) -> str:
    """One Markdown table and heatmap per bin drawn from a named distribution (the
    ``distributions.distribution_tables`` of one encoding), or ''."""
    parts = []
    for name, languages in tables.items():
        parts += [f"Exact match (%) on the test bin `{name}` (same settings and seeds as above):",
                  "", "| language | " + " | ".join(f"depth {d}" for d in depths) + " |",
                  "|---|" + "---:|" * len(depths)]
        for language, by_depth in languages.items():
            row = [seeds_text(by_depth[d].values, threshold) if d in by_depth else "–"
                   for d in depths]
            parts.append(f"| {language} | " + " | ".join(row) + " |")
        parts += ["", f"![{posenc} {name}](heatmap_{distribution_file_stem(posenc, name)}.png)", ""]
    return "\n".join(parts)


def distribution_file_stem(posenc: str, bin_name: str) -> str:
    """``nope``, ``351:400@skewed`` -> ``nope_351-400_skewed``: the name of that bin's heatmap."""
    lo, hi, distribution = parse_test_bin(bin_name)
    return f"{posenc}_{lo}-{hi}_{distribution}"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def markdown_report(report: Report) -> str:
    data = report.data
    table = report.table
    depths = sorted({d for langs in table.values() for ds in langs.values() for d in ds})
    times = wall_time(data)
    selected = ("the best mean exact match on the longest test bin — SELECTED ON TEST DATA "
                "(--select long), so these numbers overstate what a held-out choice would get"
                if report.select == "long" else "the best mean validation exact match")
    budget = (f"Budget: every cell read at {data.budget} epoch(s), as the checkpoint validation "
              f"selects by then (crasp.train.budget)"
              + (f"; {len(data.unbudgeted)} cell(s) cannot answer for it (no per-epoch test "
                 "records, or fewer epochs trained) and are left out" if data.unbudgeted
                 else "") + "." if data.budget is not None
              else "Budget: each run's own (all the epochs it trained).")
    parts = [
        "# Sweep report",
        "",
        f"Sources: {', '.join(f'`{d}`' for d in data.dirs)}. Cells done: {len(data.cells)}"
        + (f" of {data.expected} named by the sweep specs" if data.expected else "")
        + (f"; {len(data.errors)} failed" if data.errors else "") + ".",
        f"Threshold for \"length-generalizes\": ≥ {100 * report.threshold:g}% exact match on the "
        "longest test bin. Per cell, the hyperparameter setting (grid point) with "
        f"{selected} is shown; mean ± sample standard deviation over its seeds (n).",
        budget,
        "",
        (f"Wall time: {_duration(times['sessions_total_s'])} over {times['sessions']} sweep "
         f"invocation(s); " if times["sessions"] else "Wall time: ")
        + f"{_duration(times['cells_total_s'])} of training summed over cells.",
        "",
    ]
    versions = code_versions(data)
    if len(versions) > 1:
        parts += [f"The cells come from {len(versions)} versions of crasp's code (a fingerprint "
                  "of its sources, `environment.code` in results.json): "
                  + ", ".join(f"`{code}` {count} cell(s)" for code, count in versions.items())
                  + ". A cell id names the config, not the code: a change of the trainer's "
                  "floating-point order changes results in the last digits, and can tip a "
                  "cell near the threshold.", ""]
    elif versions.keys() == {UNRECORDED_CODE}:
        parts += ["Code: not recorded (the runs predate the code fingerprint in results.json).",
                  ""]
    elif versions:
        parts += [f"Code: every cell was trained by crasp code `{next(iter(versions))}` (a "
                  "fingerprint of its sources, `environment.code` in results.json; `crasp "
                  "--version` prints the running one's).", ""]
    for posenc, languages in table.items():
        parts.append(markdown_table(posenc, languages, depths, report.compiled, report.threshold,
                                    report.select))
        if "hardmax" in posenc.split("+"):
            parts.append(
                "No depth bound for the prediction task is proved for hardmax (average-hard) "
                "attention, so no theory line is drawn: the theorems are about softmax "
                "transformers of fixed precision.\n")
        elif not bounded_architecture(posenc):
            parts.append(
                "No depth bound for the prediction task is proved under this encoding, so no "
                "theory line is drawn: with a positional encoding a head can attend locally (the "
                "Y operator of TL[◁#]^pos), which in theory brings L_k down to depth 1, and the "
                "E_k theorems under positional encodings are about recognition.\n")
        parts.append(f"![{posenc} heatmap](heatmap_{posenc}.png)\n")
        counts = [entry for entry in report.seed_counts if entry["posenc"] == posenc]
        if counts:
            parts += seed_count_lines(counts, depths, bin_label(counts[0]["bin"]))
        extra = distribution_table(report.distribution_tables.get(posenc, {}), depths,
                                   report.threshold, posenc)
        if extra:
            parts.append(extra)
        robustness = [c for c in report.distributions if c["posenc"] == posenc]
        if robustness:
            parts += distribution_check_lines(robustness) + [""]
        parts.append("Smallest depth that length-generalizes, against theory and the compiled "
                     "program:\n")
        parts += [f"- {summary_text(line)}" for line in report.summary
                  if line["posenc"] == posenc]
        parts.append("")
        checks = [c for c in report.checks if c["posenc"] == posenc]
        if checks:
            parts += ["Theory checks (cells on the wrong side of a proved bound; "
                      "crasp.train.theory_bounds):", ""] + theory_check_lines(checks) + [""]
        if posenc in report.curves:
            parts.append(f"![{posenc} budget](budget_{posenc}.png)\n")
        losses = [g for g in report.budget_losses if g["posenc"] == posenc]
        if losses:
            parts += budget_loss_lines(losses) + [""]
    parts += search_choice_lines(report.search_choices, pct)
    if report.compiled:
        all_bins = sorted({b for r in report.compiled.values() for b in (r.get("bins") or {})},
                          key=lambda n: (*parse_test_bin(n)[:2], "@" in n, n))
        parts += ["## Compiled reference programs", "",
                  "Each language's reference program compiled to the exact fixed-precision "
                  "transformer (floor rounding, crasp's exact executor; not a float model) and "
                  "run on the same test bins (data settings of the language's lowest-seed cell). "
                  "These weights exist at the stated depth; they must score 100% on every bin. "
                  "A float transformer with the same depth exists up to a certified length: "
                  "`crasp compile --target float`.", "",
                  "| " + " | ".join(["language", "program", "depth", "status"]
                                    + [bin_label(b) for b in all_bins]) + " |",
                  "|---|---|---:|---|" + "---:|" * len(all_bins)]
        for language, result in report.compiled.items():
            bins = result.get("bins") or {}
            program = f"`{Path(result['program']).name}`" if result.get("program") else "–"
            if result.get("kind"):
                program += f" ({result['kind']})"
            row = [language, program, str(result.get("depth", "–")), str(result.get("status"))]
            row += [pct(bins[b]["exact_match"]) if b in bins else "–" for b in all_bins]
            parts.append("| " + " | ".join(row) + " |")
        parts.append("")
    if data.superseded:
        parts += [f"{len(data.superseded)} older cell(s) with the same coordinates but another "
                  "resolved config (e.g. run before a trainer default changed) are left out: "
                  + ", ".join(f"`{i}`" for i in data.superseded[:10])
                  + (" …" if len(data.superseded) > 10 else ""), ""]
    if data.errors or data.missing:
        parts += ["## Unfinished cells", ""]
        if data.missing:
            parts += [f"{len(data.missing)} cell(s) named by the specs have no results yet "
                      "(run the sweep command again to resume them); what each has run so far:",
                      ""] + unfinished_lines(report.unfinished, pct)
        for error in data.errors:
            parts.append(f"- `{error['id']}` failed: {error['error']}")
        parts.append("")
    cmds = commands(data)
    if cmds:
        parts += ["## Commands", "", "```"] + cmds + ["```", ""]
    parts += ["Files: `cells.csv` (one row per cell), `report.json` (everything above), "
              "`heatmap_<encoding>.png`, `budget_<encoding>.png` (where runs recorded their "
              "per-epoch test scores).", ""]
    return "\n".join(parts)
