"""``crasp eval MODEL --language NAME --bins LO:HI,...``: score any model like the trainer does.

MODEL is a compiled exact model, a compiled float realization or a trained run. The test bins
are drawn exactly as ``crasp train`` draws them (``build_splits``: a trained run's own config
and seed, so its bins are the ones in its results.json; otherwise the default config), and the
metrics are the trainer's own (``metrics.evaluate``): exact match over strings and token
accuracy over labelled positions.
"""

from __future__ import annotations

import json

import click
import numpy as np
import torch

from crasp.compiler.executor import score_ids
from crasp.errors import CraspError
from crasp.languages.datasets import MAX_STRINGS, parse_test_bins
from crasp.models import load_model
from crasp.util.progress import progress_bar, progress_option, wants_progress
from crasp.util.tables import format_table
from crasp.train.config import TrainConfig
from crasp.train.loop import build_splits, check_config
from crasp.train.metrics import SplitMetrics, evaluate


class Scorer(torch.nn.Module):
    """Any model as a module of the trainer's interface: token ids in the language's
    vocabulary (BOS = V, padding = V + 1) to logits, through the model's own vocabulary."""

    def __init__(self, model, language_vocab: tuple[str, ...]):
        super().__init__()
        vocab = list(model.config["vocab"])
        missing = [token for token in language_vocab if token not in vocab]
        if missing:
            raise CraspError(f"the model's vocabulary {vocab} lacks the language's token(s) "
                             f"{', '.join(missing)}")
        bos = model.config["bos_id"]
        # padding follows each string and the mask is causal: any id will do; BOS is valid.
        self.table = np.array([vocab.index(token) for token in language_vocab] + [bos, bos])
        self.model = model

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(score_ids(self.model, self.table[tokens.cpu().numpy()]))


def evaluate_model(model, config: TrainConfig, progress: bool = False
                   ) -> list[tuple[str, SplitMetrics]]:
    """The trainer's metrics of ``model`` on each test bin of ``config``; ``progress`` counts
    the strings scored on stderr (a trained run's 5 bins of 1,000 strings of up to 400 tokens
    take minutes)."""
    language = check_config(config)
    vocab, _, _, _, tests = build_splits(config, language)
    scorer = Scorer(model, vocab)
    with progress_bar(total=sum(split.n for split in tests), desc="scored", unit="string",
                      disable=not progress) as bar:
        return [(split.name, evaluate(scorer, split, torch.device("cpu"),
                                      config.eval_batch_tokens, bar.update))
                for split in tests]


def eval_config(model, language: str, bins: str, n: int | None, seed: int | None
                ) -> TrainConfig:
    """A trained run's own data settings (so its bins are its own), else the defaults. A model
    that was never trained has no training bin to keep its test bins apart from: where one of
    them overlaps the default's, the training strings (drawn, never used) move to the bin of
    the same width just past every test bin."""
    stored = model.config.get("train_config") if model.config.get("kind") == "trained" else None
    config = TrainConfig.from_dict(stored) if stored else TrainConfig()
    test_bins = parse_test_bins(bins)
    changes = {"language": language, "test_bins": test_bins}
    lo, hi = config.train_bin
    if not stored and any(tlo <= hi and thi >= lo for tlo, thi, *_ in test_bins):
        past = max(thi for _, thi, *_ in test_bins)
        changes["train_bin"] = (past + 1, past + 1 + hi - lo)
    if n is not None:
        changes["n_test"] = n
    if seed is not None:
        changes["seed"], changes["data_seed"] = seed, None
    return config.replace(**changes)


@click.command("eval")
@click.argument("model_dir", metavar="MODEL")
@click.option("--language", required=True, metavar="NAME", help="A built-in language.")
@click.option("--bins", required=True, metavar="LO:HI[,LO:HI...]",
              help="The test bins (string lengths), as for crasp train --test-bins.")
@click.option("--n", "n", type=click.IntRange(1, MAX_STRINGS), help="Strings per bin (default: the "
              "run's n_test, else 500).")
@click.option("--seed", type=int, help="Data seed (default: the run's, else 0).")
@click.option("--json", "as_json", is_flag=True,
              help='Print a JSON list, one object per bin: {"bin", "exact_match", '
                   '"token_accuracy", "n", ...}.')
@progress_option
def eval_command(model_dir, language, bins, n, seed, as_json, progress):
    """Score MODEL (compiled exact, compiled float, or a trained run) on a language's test bins
    with the trainer's metrics.

    \b
      crasp eval l5.model --language L5 --bins 251:300,301:350
      crasp eval runs/L5-d3 --language L5 --bins 401:450 --json
    """
    model = load_model(model_dir, "eval").executable
    limit = getattr(model, "max_tokens", None)
    longest = max(spec.hi for spec in parse_test_bins(bins))
    if limit is not None and longest > limit:
        raise CraspError(f"--bins {bins}: strings of up to {longest:,} tokens, but the model "
                         f"reads at most {limit:,}: its learned positional table has rows for "
                         f"BOS and {limit:,} tokens only")
    rows = [{"bin": name, **metrics.as_dict()}
            for name, metrics in evaluate_model(model, eval_config(model, language, bins, n,
                                                                    seed),
                                                wants_progress(progress))]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for line in format_table([("bin", "exact match", "token accuracy", "n")] + [
            (row["bin"], f"{row['exact_match']:.2%}", f"{row['token_accuracy']:.4%}",
             str(row["n"])) for row in rows]):
        click.echo(line)
