"""PNG figures of the analyses; each says what it measures (title, axes, units)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def heatmap(matrix, title: str, xlabel: str, ylabel: str, colorbar: str, xticks, yticks,
            log: bool = False):
    figure, axes = plt.subplots(figsize=(1.2 + 0.45 * len(xticks), 1.2 + 0.4 * len(yticks)))
    values = np.asarray(matrix, dtype=float)
    norm = matplotlib.colors.LogNorm(vmin=max(values[values > 0].min(), 1e-12), vmax=values.max()) \
        if log and (values > 0).any() else None
    image = axes.imshow(values, cmap="viridis", norm=norm, aspect="auto")
    axes.set_xticks(range(len(xticks)), xticks, rotation=90, fontsize=7)
    axes.set_yticks(range(len(yticks)), yticks, fontsize=7)
    axes.set(title=title, xlabel=xlabel, ylabel=ylabel)
    figure.colorbar(image, ax=axes, label=colorbar)
    plt.close(figure)
    return figure


def head_ablation(drops: dict, n_layers: int, n_heads: int, bin_name: str):
    """``drops[(mode, layer, head)]``: exact-match drop in percentage points, side by side."""
    figure, panels = plt.subplots(1, 2, figsize=(2.5 + 1.2 * n_heads, 1.5 + 0.6 * n_layers))
    for axes, mode in zip(panels, ("mean", "zero")):
        grid = np.array([[drops[(mode, l, h)] for h in range(n_heads)] for l in range(n_layers)])
        image = axes.imshow(grid, cmap="magma", vmin=0, vmax=100, aspect="auto")
        for (l, h), value in np.ndenumerate(grid):
            axes.text(h, l, f"{value:.0f}", ha="center", va="center", color="cyan", fontsize=8)
        axes.set_xticks(range(n_heads))
        axes.set_yticks(range(n_layers))
        axes.set(title=f"{mode}-ablation", xlabel="head", ylabel="layer")
    figure.suptitle(f"Exact-match drop (percentage points) on bin {bin_name}, one head ablated")
    figure.colorbar(image, ax=panels, label="drop in exact match (pp)")
    plt.close(figure)
    return figure


def pruning(curve: list[dict], bin_name: str):
    figure, axes = plt.subplots(figsize=(5, 3.2))
    kept = [point["heads_kept"] for point in curve]
    axes.plot(kept, [100 * p["exact_match"] for p in curve], "o-", label="exact match")
    axes.plot(kept, [100 * p["token_accuracy"] for p in curve], "s--", label="token accuracy")
    axes.set(title=f"Pruning curve on bin {bin_name} (mean-ablation, lowest score first)",
             xlabel="heads kept", ylabel="accuracy (%)", ylim=(0, 101))
    axes.invert_xaxis()
    axes.legend()
    plt.close(figure)
    return figure


def spectra(spectra: dict[str, list[float]], title: str):
    figure, axes = plt.subplots(figsize=(6, 3.5))
    for name, values in spectra.items():
        values = sorted(values, reverse=True)
        axes.plot(range(1, len(values) + 1), values, label=name.replace(".weight", ""))
    axes.set_yscale("symlog", linthresh=1e-6)
    axes.set(title=title, xlabel="eigenvalue rank", ylabel="eigenvalue of the diagonal block")
    axes.legend(fontsize=6, ncol=2)
    plt.close(figure)
    return figure
