"""Report pass 4b: the figures (``heatmap_<encoding>.png``, ``budget_<encoding>.png``); each
says in its title what it measures.
"""

from __future__ import annotations

import io
import math
from typing import Mapping, Sequence

from crasp.train.theory_bounds import depth_bound
from crasp.train.report.aggregate import Aggregate
from crasp.train.report.summary import bin_label
from crasp.train.report.ordering import architecture_name

def mean_label(mean: float) -> str:
    """A percentage to the unit, except that a mean below 100% never prints as "100" (99.6
    with one failing seed would read as a success): it gets the decimal, rounded down."""
    text = f"{100 * mean:.0f}"
    if text == "100" and mean < 1.0:
        text = f"{math.floor(1000 * mean) / 10:.1f}"
    return text


def heatmap_png(posenc: str, languages: Mapping[str, Mapping[int, Aggregate]],
                depths: Sequence[int], compiled: Mapping[str, dict],
                threshold: float = 0.99) -> bytes:
    """A language x depth heatmap of mean exact match, with each cell's standard deviation and
    how many of its seeds reach ``threshold``, and a theory staircase only for the rows a
    theorem bounds (``theory_bounds``): solid at a proved exact depth or lower bound, dashed at
    an upper bound whose exactness is conjectured."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    names = list(languages)
    grid = np.full((len(names), len(depths)), np.nan)
    stds = np.zeros_like(grid)
    passing: dict[tuple[int, int], str] = {}
    for r, language in enumerate(names):
        for c, depth in enumerate(depths):
            entry = languages[language].get(depth)
            if entry is not None:
                grid[r, c], stds[r, c] = entry.mean, entry.std
                passing[r, c] = f"{sum(v >= threshold for v in entry.values)}/{entry.n}"
    figure = Figure(figsize=(1.0 + 0.85 * max(len(depths), 2) + 1.6,
                             1.3 + 0.55 * max(len(names), 2)))
    axes = figure.add_subplot()
    cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
    image = axes.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0,
                        aspect="auto", interpolation="nearest")
    for r in range(len(names)):
        for c in range(len(depths)):
            if np.isnan(grid[r, c]):
                axes.text(c, r, "–", ha="center", va="center", fontsize=8, color="#555555")
                continue
            label = mean_label(grid[r, c])
            if stds[r, c] > 0.005:
                label += f" ±{100 * stds[r, c]:.0f}"
            label += f"\n{passing[r, c]}"
            axes.text(c, r, label, ha="center", va="center", fontsize=7,
                      color="black" if grid[r, c] > 0.6 else "white")
    # Staircases: the left edge of the column of the bound, joined row to row.
    bounds = [depth_bound(language, posenc) for language in names]
    solid = _staircase(axes, [b.lower if b else None for b in bounds], depths, "-")
    dashed = _staircase(axes, [b.upper if b and not b.exact else None for b in bounds], depths,
                        "--")
    marked = False
    for r, language in enumerate(names):
        reference = compiled.get(language) or {}
        if reference.get("status") == "ok" and reference.get("depth") in depths:
            c = list(depths).index(reference["depth"])
            axes.plot(c + 0.33, r - 0.28, marker="D", markersize=5, color="white",
                      markeredgecolor="black", linestyle="none")
            marked = True
    axes.set_xticks(range(len(depths)), [str(d) for d in depths])
    axes.set_yticks(range(len(names)), names)
    axes.set_xlabel("depth (layers)")
    axes.set_ylabel("language")
    axes.set_xlim(-0.5, len(depths) - 0.5)
    axes.set_ylim(len(names) - 0.5, -0.5)
    bins = {a.bin for ds in languages.values() for a in ds.values()}
    where = bin_label(next(iter(bins))) if len(bins) == 1 else "the longest test bin"
    seeds = sorted({a.n for ds in languages.values() for a in ds.values()})
    seeds_label = "–".join(map(str, sorted({seeds[0], seeds[-1]}))) if seeds else "0"
    axes.set_title(f"{architecture_name(posenc)}: exact match on {where}\n"
                   f"(best setting, mean over {seeds_label} seed(s) per cell, %; "
                   f"below: seeds ≥ {100 * threshold:g}% / seeds)", fontsize=9)
    handles = []
    if solid:
        handles.append(Line2D([], [], color="red", linewidth=2.2,
                              label="proved: minimal depth\n(or its lower bound)"))
    if dashed:
        handles.append(Line2D([], [], color="red", linewidth=2.2, linestyle="--",
                              label="proved upper bound,\nconjectured exact"))
    if not solid and not dashed:
        handles.append(Line2D([], [], color="none", label="no proved depth bound\n"
                                                          "for this encoding"))
    if marked:
        handles.append(Line2D([], [], marker="D", color="white", markeredgecolor="black",
                              linestyle="none", label="compiled program depth"))
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.22, 1.0), fontsize=7,
                frameon=False)
    colorbar = figure.colorbar(image, ax=axes, fraction=0.05, pad=0.03,
                               format=FuncFormatter(lambda value, _: f"{100 * value:.0f}"))
    colorbar.set_label("mean exact match (%)", fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    return buffer.getvalue()


def _staircase(axes, levels: Sequence[int | None], depths: Sequence[int], style: str) -> bool:
    """Draw the left edges of the columns at ``levels`` (one per row, None: no line there);
    returns whether anything was drawn."""
    drawn = False
    xs: list[float] = []
    ys: list[float] = []
    for row, level in enumerate([*levels, None]):
        if level is None:
            if xs:
                axes.plot(xs, ys, color="red", linewidth=2.2, linestyle=style)
                drawn = True
            xs, ys = [], []
            continue
        edge = sum(1 for d in depths if d < level) - 0.5
        xs += [edge, edge]
        ys += [row - 0.5, row + 0.5]
    return drawn


def budget_png(posenc: str, curve: Mapping, depths: Sequence[int], threshold: float) -> bytes:
    """Smallest depth where a majority of seeds succeed, against the training budget, one line
    per language; a dotted line at a depth a theorem fixes exactly, none elsewhere."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    budgets = curve["budgets"]
    none_level = max(depths, default=0) + 1
    figure = Figure(figsize=(7.2, 4.2))
    axes = figure.add_subplot()
    colors = matplotlib.colormaps["tab10"]
    for index, (language, lines) in enumerate(curve["languages"].items()):
        color = colors(index % 10)
        values = [none_level if v is None else v for v in lines["majority"]]
        offset = (index - len(curve["languages"]) / 2) * 0.04  # keep equal lines apart
        axes.step(budgets, [v + offset for v in values], where="post", color=color,
                  linewidth=1.8, marker="o", markersize=3, label=language)
        bound = depth_bound(language, posenc)
        if bound is not None and bound.exact:
            axes.axhline(bound.upper + offset, color=color, linestyle=":", linewidth=1.2)
    axes.set_yticks(list(depths) + [none_level],
                    [str(d) for d in depths] + ["none"])
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("training budget (epochs; the checkpoint validation selects by then)")
    axes.set_ylabel("smallest depth where a majority\nof seeds succeed")
    axes.set_title(f"{architecture_name(posenc)}: smallest succeeding depth vs budget\n"
                   f"(success: ≥ {100 * threshold:g}% exact match on the longest test bin; "
                   "dotted: the depth a theorem fixes)", fontsize=9)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()
