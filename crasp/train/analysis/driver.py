"""The pipeline of ``crasp analyze``: load, measure, write. Definitions live in each module."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from crasp.train.analysis import ablation, depth, hessian, outputs, plots
from crasp.train.analysis.loading import LoadedRun
from crasp.train.analysis.paths import PathAblated
from crasp.train.metrics import Scored, evaluate
from crasp.util.progress import progress_bar


def path_effects(loaded: LoadedRun, means, baseline: dict,
                 scored: Scored = None) -> list[dict]:
    """Every path (l, a) -> (l + 1, b), mean-ablated; drops on the longest bin."""
    model, longest = loaded.model, loaded.longest
    n_heads = model.layers[0].attn.n_heads
    rows = []
    for layer in range(len(model.layers) - 1):
        for source in range(n_heads):
            for target in range(n_heads):
                metrics = evaluate(PathAblated(model, layer, source, target, "mean", means),
                                   longest, "cpu", loaded.config.eval_batch_tokens, scored)
                rows.append({"layer": layer, "source_head": source, "target_head": target,
                             "exact_match": metrics.exact_match,
                             "token_accuracy": metrics.token_accuracy,
                             "exact_match_drop": baseline[longest.name]["exact_match"]
                             - metrics.exact_match,
                             "token_accuracy_drop": baseline[longest.name]["token_accuracy"]
                             - metrics.token_accuracy})
    return rows


def most_strings_read(loaded: LoadedRun) -> int:
    """The strings ``analyze_ablations``'s evaluations read at most: every test bin for the
    heads' means, the baseline and each head alone and each layer whole in both modes; the
    longest bin for each point of the pruning curve, each path, and each subset of layers the
    effective depth tries in both modes (it stops at the first size that succeeds)."""
    n_layers, n_heads = len(loaded.model.layers), loaded.model.layers[0].attn.n_heads
    every, longest = sum(split.n for split in loaded.tests), loaded.longest.n
    modes = len(ablation.MODES)
    return (every * (2 + (n_layers * n_heads + n_layers) * modes)
            + longest * (n_layers * n_heads + 1 + (n_layers - 1) * n_heads * n_heads
                         + modes * 2 ** n_layers))


def analyze_ablations(loaded: LoadedRun, out: Path, progress: bool = False) -> dict:
    """Measure and write ``crasp analyze``'s files into ``out``; ``progress`` counts the
    strings read by every evaluation (at most 92,000 for a paper-grid run, docs/analysis.md),
    the step in the bar's postfix."""
    model, longest = loaded.model, loaded.longest
    n_layers, n_heads = len(model.layers), model.layers[0].attn.n_heads
    with progress_bar(total=most_strings_read(loaded), desc="analyze", unit="string",
                      disable=not progress) as bar:
        def step(name: str):
            bar.set_postfix_str(name, refresh=False)
            return bar.update

        means = ablation.head_means(loaded, step("head means"))
        baseline = ablation.metrics_with(loaded, [], "mean", means, scored=step("baseline"))
        rows = ablation.ablation_table(loaded, means, baseline, step("ablation table"))
        scores = ablation.head_scores(rows, longest.name)
        curve = ablation.pruning_curve(loaded, means, scores, step("pruning curve"))
        paths = (path_effects(loaded, means, baseline, step("paths")) if n_layers >= 2
                 else [])
        scored = step("effective depth")
        effective = {mode: depth.effective_depth(loaded, means, mode, scored=scored)
                     for mode in ablation.MODES}
        bar.total = bar.n   # the effective depth stops early where a smaller depth succeeds
    record = {"language": loaded.config.language, "posenc": loaded.config.posenc,
              "norm": loaded.config.norm, "nominal_depth": n_layers, "n_heads": n_heads,
              "theory_depth": effective["mean"]["theory_depth"], "longest_bin": longest.name,
              "baseline": baseline, "effective_depth": effective,
              "head_scores": [{"layer": l, "head": h, "score": s} for (l, h), s in scores.items()],
              "pruning_curve": curve, "paths": paths}
    outputs.write_json(out / "analysis.json", record)
    outputs.write_csv(out / "ablations.csv", [asdict(row) for row in rows])
    outputs.write_csv(out / "pruning.csv", [{k: v for k, v in p.items() if k != "removed"}
                                            for p in curve])
    drops = {(row.mode, row.layer, row.head): 100 * row.exact_match_drop for row in rows
             if row.unit == "head" and row.bin == longest.name}
    outputs.write_figure(out / "head_ablation.png",
                         plots.head_ablation(drops, n_layers, n_heads, longest.name))
    outputs.write_figure(out / "pruning.png", plots.pruning(curve, longest.name))
    if paths:
        outputs.write_csv(out / "paths.csv", paths)
        labels = [f"L{l}H{h}" for l in range(n_layers) for h in range(n_heads)]
        matrix = [[0.0] * len(labels) for _ in labels]
        for row in paths:
            matrix[row["layer"] * n_heads + row["source_head"]][
                (row["layer"] + 1) * n_heads + row["target_head"]] = (
                    100 * row["token_accuracy_drop"])
        outputs.write_figure(out / "paths.png", plots.heatmap(
            matrix, f"Path ablation (mean): token-accuracy drop on bin {longest.name}",
            "target head (reads the ablated stream)", "source head (ablated)",
            "drop in token accuracy (pp)", labels, labels))
    return record


def analyze_hessian(loaded: LoadedRun, out: Path, n_strings: int, max_params: int) -> dict:
    split = min(loaded.tests, key=lambda s: (s.hi, s.lo))
    result = hessian.loss_hessian(loaded.model, hessian.fixed_batch(split, n_strings), max_params)
    norms = result.block_norms()
    names = [name.removeprefix("layers.").removesuffix(".weight") for name in result.names]
    spectra = result.spectra()
    record = {"language": loaded.config.language, "posenc": loaded.config.posenc,
              "batch": {"bin": split.name, "n_strings": min(n_strings, split.n)},
              "blocks": names, "sizes": result.sizes, "block_norms": norms.tolist(),
              "spectra": {name: spectra[full] for name, full in zip(names, result.names)}}
    outputs.write_json(out / "hessian.json", record)
    outputs.write_csv(out / "hessian_blocks.csv",
                      [{"row": a, **{b: float(norms[i, j]) for j, b in enumerate(names)}}
                       for i, a in enumerate(names)])
    tag = f"{loaded.config.language}, {loaded.config.posenc}, depth {len(loaded.model.layers)}"
    outputs.write_figure(out / "hessian_blocks.png", plots.heatmap(
        norms, f"Loss Hessian block norms ||H_ij||_F ({tag})", "block j", "block i",
        "Frobenius norm (log scale)", names, names, log=True))
    outputs.write_figure(out / "hessian_spectra.png", plots.spectra(
        {name: spectra[full] for name, full in zip(names, result.names)},
        f"Spectrum of each diagonal Hessian block ({tag})"))
    return record
