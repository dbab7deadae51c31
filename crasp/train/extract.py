"""``crasp extract RUN -o PROG.crasp``: a program from a float run, with its fidelity measured.

The theorem gives an exact program only for a fixed-precision transformer. For an ordinary
(float) run, extraction takes three steps, and reports what each costs:

1. **Quantize** (``quantize.QuantizedRun``): the run's weights read in the format's arithmetic
   at p total and s fractional bits. (p, s) is chosen on the run's *validation* split: the
   first candidate of ``CANDIDATES`` (fewest bits first, because the decompiler's work grows
   with the number of states, hence with p) whose token accuracy reaches the float model's
   own; if none does, the most accurate one. Every candidate's accuracy is reported. First,
   before a validation string is read, layer 1 is charged to ``--max-states`` at every
   candidate (``charge_first_layer``: its query states are the tokens', so it is cheap);
   where every candidate is past it, extraction is refused there, for step 2 would refuse
   whichever the choice took (minutes of reading saved on a run of the paper's size).
2. **Decompile** the quantized model exactly (``decompile_model``; the same state budget
   ``--max-states`` as ``crasp decompile``, and the same refusal when a layer exceeds it).
3. **Fidelity**: the program against the float model at every token position, on the run's
   test bins and, for languages that have them, on the same bins under the skewed and extreme
   distributions (``crasp.languages.distributions``); also the program against the quantized
   model (1.0 unless a float64 summation-order difference moved a value across a rounding
   boundary: the decompiler's precondition for real weights). Beside it the depths: the
   program's (``crasp.analyze``), the run's nominal depth, its effective depth (``crasp
   analyze``: the fewest attention layers that keep its success, None for a run that does
   not succeed) and the theory's depth for the language.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

import crasp
from crasp.train.batching import EncodedSplit
from crasp.train.config import TrainConfig, test_bin_name
from crasp.train.metrics import Scored, evaluate
from crasp.train.quantize import QuantizedRun
from crasp.util.progress import progress_bar

if TYPE_CHECKING:
    from crasp.train.analysis.loading import LoadedRun

CANDIDATES = ((4, 1), (4, 2), (5, 2), (6, 2), (6, 3), (8, 3), (8, 4), (10, 5), (12, 6),
              (16, 8), (24, 12))
"""(total bits, fractional bits) tried in this order (``choose_precision``)."""
EVAL_TOKENS = 4096


@dataclass(frozen=True)
class PrecisionChoice:
    total_bits: int
    frac_bits: int
    candidates: list[dict]          # per candidate: total_bits, frac_bits, token_accuracy, ...
    float_token_accuracy: float
    chosen_by: str = "validation token accuracy"    # or "--precision"

    @property
    def token_accuracy(self) -> float:
        """The chosen candidate's validation token accuracy (not the last one tried: where
        none reaches the float model's, the best is chosen)."""
        return next(row["token_accuracy"] for row in self.candidates
                    if (row["total_bits"], row["frac_bits"]) == (self.total_bits,
                                                                 self.frac_bits))

    def as_dict(self) -> dict:
        return {"total_bits": self.total_bits, "frac_bits": self.frac_bits,
                "chosen_by": self.chosen_by,
                "float_validation_token_accuracy": self.float_token_accuracy,
                "candidates": self.candidates}


def choose_precision(module, validation: EncodedSplit, candidates=CANDIDATES,
                     scored: Scored = None) -> PrecisionChoice:
    """The first candidate whose validation token accuracy reaches the float model's (see
    the module docstring), with every candidate's scores; ``scored(k)`` is told after each
    batch of ``k`` validation strings scored (the float model's, then each candidate's)."""
    reference = evaluate(module, validation, "cpu", EVAL_TOKENS, scored)
    rows, chosen = [], None
    for total_bits, frac_bits in candidates:
        metrics = evaluate(QuantizedRun(module, total_bits, frac_bits), validation, "cpu",
                           EVAL_TOKENS, scored)
        rows.append({"total_bits": total_bits, "frac_bits": frac_bits,
                     "token_accuracy": metrics.token_accuracy,
                     "exact_match": metrics.exact_match})
        if chosen is None and metrics.token_accuracy >= reference.token_accuracy:
            chosen = rows[-1]
            break
    if chosen is None:
        chosen = max(rows, key=lambda row: row["token_accuracy"])
    return PrecisionChoice(chosen["total_bits"], chosen["frac_bits"], rows,
                           reference.token_accuracy)


def _decisions(scores: np.ndarray, split: EncodedSplit) -> np.ndarray:
    """[N, T] decisions at the token positions (column 0, BOS, dropped)."""
    return scores[:, 1:] > 0


def split_tokens(split: EncodedSplit, vocab) -> list[list[str]]:
    ids = split.tokens.numpy()
    return [[vocab[i] for i in ids[row, 1:split.lengths[row]]] for row in range(split.n)]


def model_decisions(module, split: EncodedSplit,
                    scored: Scored = None) -> np.ndarray:
    """``module``'s decisions [N, T] at every token position (False past each length);
    ``scored(k)`` is told after each batch of ``k`` strings."""
    width = split.tokens.shape[1]
    out = np.zeros((split.n, width - 1), dtype=bool)
    rows = max(1, EVAL_TOKENS // width)
    with torch.no_grad():
        for start in range(0, split.n, rows):
            scores = module(split.tokens[start:start + rows]).double().numpy()
            out[start:start + rows] = _decisions(scores, split)
            if scored is not None:
                scored(len(scores))
    real = np.arange(width - 1)[None, :] < (split.lengths - 1)[:, None]
    return out & real


def agreement(first: np.ndarray, second: np.ndarray, split: EncodedSplit) -> dict:
    """Positions and strings on which two [N, T] decision arrays agree."""
    real = np.arange(first.shape[1])[None, :] < (split.lengths - 1)[:, None]
    same = (first == second) | ~real
    return {"positions": int(real.sum()), "agree": float(same[real].mean()) if real.any()
            else 1.0, "strings": split.n, "strings_agree": float(same.all(axis=1).mean())}


def fidelity_splits(config: TrainConfig, language, vocab) -> list[EncodedSplit]:
    """The run's test bins (the same strings it was tested on), and those bins under each
    named distribution of the language (skewed, extreme for L_k and E_k)."""
    from crasp.languages import build_task
    from crasp.languages.datasets import parse_test_bin
    from crasp.train.batching import encode_split

    bins = [test_bin_name(b) for b in config.test_bins]
    extra = [f"{name.split('@')[0]}@{distribution}" for name in bins
             for distribution in sorted(getattr(language, "distributions", {}) or {})]
    wanted = bins + [name for name in extra if name not in bins]
    seed = config.seed if config.data_seed is None else config.data_seed
    task = build_task(language, train_bin=tuple(config.train_bin),
                      test_bins=[parse_test_bin(name) for name in wanted],
                      n_train=config.n_train, n_test=config.n_test,
                      val_fraction=config.val_fraction, seed=seed)
    splits = []
    for split, name in zip(task.tests, wanted):
        encoded = encode_split(split, tuple(vocab))
        encoded.name = name
        splits.append(encoded)
    return splits


def fidelity(program: crasp.Program, module, quantized: QuantizedRun,
             splits: list[EncodedSplit], vocab,
             scored: Scored = None) -> dict:
    """Per split: the program against the float model, and against the quantized model;
    ``scored(k)`` is told after each batch of ``k`` strings a model answered (each string
    twice: by the float model and by the quantized one)."""
    report = {}
    for split in splits:
        tokens = split_tokens(split, vocab)
        answers = crasp.evaluate(program, tokens).output
        width = split.tokens.shape[1] - 1
        padded = np.zeros((split.n, width), dtype=bool)
        padded[:, :answers.shape[1]] = answers
        report[split.name] = {
            "float": agreement(padded, model_decisions(module, split, scored), split),
            "quantized": agreement(padded, model_decisions(quantized, split, scored), split)}
    return report


def run_depths(loaded: LoadedRun, progress: bool = False) -> dict:
    """The run's nominal depth, effective depth (crasp analyze, mean-ablation) and the
    theory's depth for its language; ``progress`` counts the strings read (the heads' means
    over every test bin, then the longest bin for each of up to 2^depth subsets of layers)."""
    from crasp.train.analysis.ablation import head_means
    from crasp.train.analysis.depth import effective_depth

    every = sum(split.n for split in loaded.tests)
    with progress_bar(total=every + 2 ** loaded.config.depth * loaded.longest.n,
                      desc="effective depth", unit="string", disable=not progress) as bar:
        result = effective_depth(loaded, head_means(loaded, bar.update), scored=bar.update)
        bar.total = bar.n
    return {"nominal": loaded.config.depth, "effective": result["effective_depth"],
            "theory": result["theory_depth"], "theory_bound": result["theory_bound"]}


@dataclass(frozen=True)
class Extraction:
    """The program (checked), its text, and the report (``format_extraction``)."""

    program: crasp.Program
    text: str
    summary: dict


def extract_run(run_dir: str | Path, max_states: int, precision: str | None = None,
                source: str | None = None, vocabulary_only: bool = False,
                progress: bool = False) -> Extraction:
    """Quantize, decompile and measure the trained (float) run in ``run_dir`` (module
    docstring). ``precision`` ("P.S") skips the choice; ``vocabulary_only`` as
    ``decompile_model``'s (the fidelity is measured on strings of the vocabulary either
    way). Raises ``StateLimitError`` when the quantized model has more states than
    ``max_states``. ``progress`` shows a bar per step on stderr: a run of the paper's size
    (d_model 256, strings of up to 400 tokens) reads every string in the format's exact
    arithmetic, which costs seconds per string."""
    from crasp.decompile import decompile_model
    from crasp.decompile.enumerate_states import StateLimitError
    from crasp.train.analysis.loading import load_run
    from crasp.train.fixed_precision import parse_precision

    run_dir = Path(run_dir)
    loaded = load_run(run_dir)
    config, language, vocab = loaded.config, loaded.language, loaded.vocab
    # a float64 copy: the effective depth below is measured on the run's own float32 model
    module = copy.deepcopy(loaded.model).to(torch.float64)
    candidates = CANDIDATES if precision is None else [parse_precision(precision)]
    name = source or str(run_dir)
    _refuse_where_no_candidate_fits(name, module, vocab, config, candidates, max_states,
                                    precision is not None)
    with progress_bar(total=(1 + len(candidates)) * loaded.validation.n, desc="precision",
                      unit="string", disable=not progress) as bar:
        choice = choose_precision(module, loaded.validation, candidates, bar.update)
        if precision is not None:
            choice = dataclasses.replace(choice, chosen_by="--precision")
        bar.total = bar.n   # the choice stops at the first candidate good enough
    quantized, state_source = _read_at(module, vocab, config, choice.total_bits,
                                       choice.frac_bits)
    read_as = f"{name} read at precision {choice.total_bits}.{choice.frac_bits}"
    try:
        decompiled = decompile_model(state_source, read_as, max_states,
                                     vocabulary_only=vocabulary_only, progress=progress)
    except StateLimitError as error:
        accuracy = f"{choice.token_accuracy:.4f}"
        how = (f"set by --precision; validation token accuracy {accuracy}"
               if choice.chosen_by == "--precision" else
               f"chosen by validation token accuracy, {accuracy}; --precision sets it")
        raise StateLimitError(f"{read_as} ({how}): {error}", error.spent,
                              error.limit) from None
    splits = fidelity_splits(config, language, vocab)
    with progress_bar(total=2 * sum(split.n for split in splits), desc="fidelity",
                      unit="string", disable=not progress) as bar:
        report = fidelity(decompiled.program, module, quantized, splits, vocab, bar.update)
    summary = {"run": name, "precision": choice.as_dict(), "fidelity": report,
               "depth": {"program": decompiled.summary["depth"],
                         **run_depths(loaded, progress)},
               "decompile": decompiled.summary}
    return Extraction(decompiled.program, decompiled.text, summary)


def _read_at(module, vocab, config, total_bits: int, frac_bits: int):
    """The run quantized at ``total_bits``.``frac_bits``, and the decompiler's view of it."""
    from crasp.decompile.enumerate_states import StateSource
    quantized = QuantizedRun(module, total_bits, frac_bits)
    return quantized, StateSource(quantized, tuple(vocab), len(vocab), None, quantized.n_layers,
                                  quantized.n_heads, quantized.d_head, total_bits, frac_bits,
                                  tuple(f"h{i}" for i in range(config.d_model)))


def _refuse_where_no_candidate_fits(name: str, module, vocab, config, candidates,
                                    max_states: int, given: bool) -> None:
    """``StateLimitError`` where layer 1 alone exceeds ``max_states`` at every candidate
    precision, before a validation string is read: the choice (minutes on a run of the
    paper's size) could only end in that refusal. Layer 1's query states are the tokens', so
    charging it costs a few table rows per token and candidate. Where one candidate fits,
    nothing changes: the choice runs as before, and a later layer may still refuse."""
    from crasp.decompile.budget import Budget, StateLimitError, count_text
    from crasp.decompile.enumerate_states import charge_first_layer
    refusals = []
    for total_bits, frac_bits in candidates:
        try:
            charge_first_layer(_read_at(module, vocab, config, total_bits, frac_bits)[1],
                               Budget(max_states))
            return
        except StateLimitError as error:
            refusals.append((f"{total_bits}.{frac_bits}", error))
    if given:
        (precision, error), = refusals
        raise StateLimitError(f"{name} read at precision {precision} (set by --precision): "
                              f"{error}", error.spent, error.limit)
    rows = "".join(f"\n  {precision}: {error.refused[0]} ({count_text(error.refused[1])} "
                   "units)" for precision, error in refusals)
    raise StateLimitError(
        f"{name}: the model has too many states to decompile at every candidate precision: "
        f"layer 1 alone exceeds --max-states {max_states:,} (found before any validation "
        f"string was read):{rows}\n(raise --max-states to try anyway; a narrower model, "
        "fewer head dimensions: --d-model, --n-heads, has fewer states)", 0, max_states)


def format_extraction(summary: dict) -> str:
    precision = summary["precision"]
    how = ("set by --precision; the float model's validation token accuracy is"
           if precision["chosen_by"] == "--precision" else
           "chosen by validation token accuracy; the float model's is")
    lines = [f"precision    {precision['total_bits']}.{precision['frac_bits']} ({how} "
             f"{precision['float_validation_token_accuracy']:.4f})"]
    lines += [f"  {row['total_bits']}.{row['frac_bits']}: token accuracy "
              f"{row['token_accuracy']:.4f}, exact match {row['exact_match']:.4f}"
              for row in precision["candidates"]]
    depth = summary["depth"]
    lines.append(f"depth        program {depth['program']}, run {depth['nominal']} (nominal), "
                 f"{depth['effective']} (effective, crasp analyze), theory {depth['theory']}")
    lines.append("fidelity     agreement of the program with the float model at every position "
                 "(and with the quantized model)")
    lines += [f"  {name}: {row['float']['agree']:.4f} of {row['float']['positions']:,} "
              f"positions, {row['float']['strings_agree']:.4f} of {row['float']['strings']} "
              f"strings (quantized: {row['quantized']['agree']:.4f})"
              for name, row in summary["fidelity"].items()]
    lines.append(f"definitions  {summary['decompile']['definitions']}")
    return "\n".join(lines)
