"""Rebuild a finished run: its config, its best weights, its validation split and test bins.

The splits are regenerated exactly as the trainer made them (``build_splits`` with the
run's own config and data seed), so the metrics here are comparable with ``results.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crasp.errors import CraspError
from crasp.train import run as files
from crasp.train.batching import EncodedSplit
from crasp.train.checkpoint import load_checkpoint
from crasp.train.config import TrainConfig
from crasp.train.loop import build_splits, check_config
from crasp.train.model import CausalTransformer


@dataclass
class LoadedRun:
    config: TrainConfig
    model: CausalTransformer
    tests: list[EncodedSplit]
    language: object
    vocab: tuple[str, ...]
    validation: EncodedSplit

    @property
    def longest(self) -> EncodedSplit:
        """The test bin whose success decides a run (the trainer's and the report's rule)."""
        return max(self.tests, key=lambda split: (split.hi, split.lo))


def load_run(run_dir: str | Path) -> LoadedRun:
    """The finished run in ``run_dir``, read as every command reads one
    (``crasp.train.checkpoint.load_checkpoint``: results.json's vocabulary, and its
    ``selected`` overrides, since a search's best trial may have another width than
    config.json's), with its validation split and test bins rebuilt from that config."""
    run_dir = Path(run_dir)
    for name in (files.CONFIG_FILE, files.BEST_FILE):
        if not (run_dir / name).is_file():
            raise CraspError(f"{run_dir}: not a finished training run (no {name}); "
                             f"expected the directory written by `crasp train`")
    checkpoint = load_checkpoint(run_dir)
    config = TrainConfig.from_dict(checkpoint.config["train_config"]).replace(device="cpu")
    language = check_config(config)
    vocab, _, _, validation, tests = build_splits(config, language)
    if list(vocab) != checkpoint.config["vocab"]:
        raise CraspError(f"{run_dir}/{files.RESULTS_FILE}: the vocabulary "
                         f"{checkpoint.config['vocab']} is not the one the run's language "
                         f"gives ({list(vocab)})")
    return LoadedRun(config, checkpoint.module, tests, language, vocab, validation)


def all_tokens_batches(loaded: LoadedRun):
    """Every evaluation batch of every test bin (for means over the evaluation data)."""
    for split in loaded.tests:
        yield from split.eval_batches(loaded.config.eval_batch_tokens)

