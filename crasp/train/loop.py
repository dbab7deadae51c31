"""The training loop: ``train(config, run_dir)``.

One run = one or more *trials* (several only when ``config.search`` is set, as in the
knee-deep preset). Each trial builds a fresh model from ``torch.manual_seed(seed)``, trains it
with AdamW (linear warmup, then a constant, linear or cosine schedule), gradient clipping, and
evaluates the validation split after every epoch. A trial stops at 100% validation exact match
(success; that also ends the search), when ``patience`` epochs pass without a better validation
score (exact strings, then right positions), or after ``epochs`` epochs. The best weights over
all trials are kept as a safetensors file; at the end every test bin is evaluated with them.

Reproducibility: the data come from ``build_task(..., seed=data_seed or seed)``, the weights
from ``torch.manual_seed(seed)``, the batch order from a numpy Generator seeded with
``(seed, trial, epoch)``, dropout from torch's global RNG, whose state is checkpointed. On CPU
with a fixed thread count the same config gives bitwise-identical results, interrupted and
resumed or not.
"""

from __future__ import annotations

import math
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from crasp.util.code_fingerprint import code_fingerprint
from crasp.errors import CraspError
from crasp.train import run as files
from crasp.train.batching import EncodedSplit, encode_split
from crasp.train.budget import improvement_record
from crasp.train.config import TrainConfig, test_bin_name
from crasp.train.fixed_precision import (remove_format_model, restore_format_model,
                                         write_format_model)
from crasp.train.metrics import SplitMetrics, evaluate, masked_loss
from crasp.train.init import load_initial_weights
from crasp.train.model import build_model, count_parameters
from crasp.train.optimization import load_resumed, make_optimizer, make_scheduler, rng_state
from crasp.train.results import BinScore, RunResults
from crasp.train.signals import SignalGuard

TIMING_KEYS = ("wall_time_s", "train_time_s", "eval_time_s")


# ---------------------------------------------------------------------------- set-up

def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise CraspError("--device cuda: CUDA is not available on this machine "
                         "(use --device cpu or auto)")
    return torch.device(name)


def check_config(config: TrainConfig):
    """Validate ``config`` and its language (cheap; raises ``CraspError``). Returns the language."""
    from crasp.languages import get_language

    config = config.normalized().validate()
    language = get_language(config.language, config.dialect)
    resolve_device(config.device)
    return language


def build_splits(config: TrainConfig, language) -> tuple[tuple[str, ...], dict[str, Any],
                                                         EncodedSplit, EncodedSplit,
                                                         list[EncodedSplit]]:
    from crasp.languages import build_task
    from crasp.languages.datasets import parse_test_bin

    seed = config.seed if config.data_seed is None else config.data_seed
    task = build_task(language, train_bin=tuple(config.train_bin),
                      test_bins=[parse_test_bin(test_bin_name(b)) for b in config.test_bins],
                      n_train=config.n_train,
                      n_test=config.n_test, val_fraction=config.val_fraction, seed=seed)
    vocab = tuple(task.vocab)
    train_split = encode_split(task.train, vocab)
    val_split = encode_split(task.val, vocab)
    tests = [encode_split(split, vocab) for split in task.tests]
    for split, test_bin in zip(tests, config.test_bins):
        split.name = test_bin_name(test_bin)
    if train_split.n == 0 or val_split.n == 0:
        raise CraspError(f"language {config.language} gave no training or no validation "
                         f"strings in the bin {config.train_bin[0]}:{config.train_bin[1]}")
    data = {"vocab": list(vocab), "n_train": train_split.n, "n_val": val_split.n,
            "duplicates": {s.name: int(getattr(s, "duplicates", 0))
                           for s in [task.train, task.val, *task.tests]},
            "n_test": {split.name: split.n for split in tests}}
    return vocab, data, train_split, val_split, tests


def _overrides(config: TrainConfig, trial: int) -> dict[str, Any]:
    return dict(config.search[trial]) if config.search else {}


# ---------------------------------------------------------------------------- train

def train(config: TrainConfig, run_dir: str | Path, progress: bool = False, resume: bool = True,
          max_epochs_this_session: int | None = None,
          only_trial: int | None = None) -> dict[str, Any] | None:
    """Train ``config`` in ``run_dir`` and return the dict written to ``results.json``.

    ``resume=True`` continues an interrupted run found in ``run_dir`` (its ``config.json``
    must equal ``config``) and returns the stored results at once if the run already
    finished; ``resume=False`` starts over, replacing the run files. SIGINT/SIGTERM stop the
    run at the next step and raise ``TrainingInterrupted`` (a ``KeyboardInterrupt``) with the
    last epoch's checkpoint on disk (one after the last step lets the run finish and reaches
    an enclosing guard). ``max_epochs_this_session`` stops (returning ``None``) after that
    many epochs have finished in this call, leaving a resumable checkpoint.

    ``only_trial=i`` runs trial ``i`` of the search alone, exactly as the whole search would run
    it (fresh weights from the seed, batch order from ``(seed, i, epoch)``), and records it as
    ``search_trial``: the trials of a search are independent, so ``crasp.train.search_parts``
    can run them apart (in parallel, or in separate sessions) and assemble the search's result.
    """
    config = config.normalized().validate()
    language = check_config(config)
    if only_trial is not None and not 0 <= only_trial < len(config.search or ()):
        raise CraspError(f"only_trial={only_trial}: the config searches "
                         f"{len(config.search or ())} configurations")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    config_path = run_dir / files.CONFIG_FILE
    state = None
    if resume and config_path.is_file():
        try:
            recorded = files.read_json(config_path)
        except (OSError, ValueError) as error:
            raise CraspError(f"{config_path}: unreadable config ({error})") from None
        try:
            stored = TrainConfig.from_dict(recorded)
        except CraspError as error:  # the config's own checks do not name the file
            raise CraspError(f"{config_path}: {error}") from None
        if stored.to_dict() != config.to_dict():
            changed = sorted(k for k, v in config.to_dict().items() if stored.to_dict().get(k) != v)
            raise CraspError(f"{run_dir} holds a run with a different config (differs in: "
                             f"{', '.join(changed)}); use another run directory")
        if (run_dir / files.RESULTS_FILE).is_file():
            stored_results = RunResults.read(run_dir)
            _check_same_trial(run_dir, stored_results.search_trial, only_trial)
            restore_format_model(run_dir, stored_results)  # a --precision run's, if removed
            return stored_results.to_json()
        if os.path.lexists(run_dir / files.STATE_FILE):  # a FIFO or symlink: refused, not skipped
            state = files.load_state(run_dir / files.STATE_FILE)
            _check_same_trial(run_dir, state.get("only_trial"), only_trial)
            files.check_state_fits(run_dir / files.STATE_FILE, state, config.trials(), only_trial)
    else:
        for name in files.RUN_FILES:
            (run_dir / name).unlink(missing_ok=True)
        remove_format_model(run_dir)   # an earlier --precision run's
        files.write_json(config_path, config.to_dict())

    device = resolve_device(config.device)
    threads_before = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(config.threads)
    try:
        vocab, data, train_split, val_split, tests = build_splits(config, language)
        trainer = _Trainer(config, run_dir, device, vocab, train_split, val_split, tests,
                           progress)
        trainer.only_trial = only_trial
        with SignalGuard() as guard:
            if not trainer.run(state, guard, max_epochs_this_session):
                return None
            return trainer.finish(language, data)
    finally:   # the process goes on with its own thread count, however the run ended
        torch.set_num_threads(threads_before)


def _check_same_trial(run_dir: Path, stored: int | None, wanted: int | None) -> None:
    def name(trial):
        return "the whole search" if trial is None else f"trial {trial} of the search alone"

    if stored != wanted:
        raise CraspError(f"{run_dir} holds a run of {name(stored)}, not of {name(wanted)}; "
                         f"use another run directory")


class _Trainer:
    def __init__(self, config: TrainConfig, run_dir: Path, device: torch.device, vocab,
                 train_split: EncodedSplit, val_split: EncodedSplit,
                 tests: list[EncodedSplit], progress: bool):
        self.config = config
        self.run_dir = run_dir
        self.device = device
        self.vocab = vocab
        self.train_split = train_split
        self.val_split = val_split
        self.tests = tests
        self.progress = progress
        self.trials = config.trials()
        self.only_trial: int | None = None

    # ------------------------------------------------------------------ state
    def _fresh_state(self) -> dict[str, Any]:
        return {"version": 1, "trial": self.only_trial or 0, "epoch": 0, "step": 0,
                "history": [], "trial_summaries": [], "best": None, "trial_best": None,
                "since_improvement": 0, "elapsed": 0.0, "done": False, "improvements": [],
                "only_trial": self.only_trial}

    def _new_trial(self, trial: int):
        config = self.trials[trial]
        torch.manual_seed(config.seed)
        model = build_model(config, len(self.vocab))
        if config.init_from:
            load_initial_weights(model, config, self.vocab)
        model.to(self.device)
        optimizer = make_optimizer(model, config)
        steps = math.ceil(self.train_split.n / config.batch_size)
        scheduler = make_scheduler(optimizer, config, steps)
        return model, optimizer, scheduler

    def _save(self, state, model, optimizer, scheduler) -> None:
        state = dict(state)
        state["model"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        state["optimizer"] = optimizer.state_dict()
        state["scheduler"] = scheduler.state_dict()
        state["rng"] = rng_state(self.device)
        files.save_state(self.run_dir / files.STATE_FILE, state)

    # ------------------------------------------------------------------ loop
    def run(self, state, guard, max_epochs_this_session) -> bool:
        metrics_path = self.run_dir / files.METRICS_FILE
        resumed = state is not None
        if state is None:
            state = self._fresh_state()
            files.write_metrics(metrics_path, [])
        else:
            files.write_metrics(metrics_path, state["history"])
        self.state = state
        epochs_this_session = 0
        while not state["done"]:
            trial = state["trial"]
            config = self.trials[trial]
            model, optimizer, scheduler = self._new_trial(trial)
            if resumed and state["epoch"] > 0:  # mid-trial: continue exactly where it stopped
                try:
                    load_resumed(state, model, optimizer, scheduler, self.device)
                except Exception as error:  # torch raises many kinds on a state not its own
                    why = files.first_line(error) or type(error).__name__
                    raise CraspError(f"{self.run_dir / files.STATE_FILE} does not fit this "
                                     f"run's model: {why}; {files.START_OVER}") from None
            resumed = False
            for key in ("model", "optimizer", "scheduler", "rng"):
                state.pop(key, None)
            stop_reason = None
            steps_per_epoch = math.ceil(self.train_split.n / config.batch_size)
            bar = self._bar(trial, config, steps_per_epoch, state["epoch"])
            try:
                while state["epoch"] < config.epochs:
                    line = self._epoch(trial, config, model, optimizer, scheduler, guard, bar)
                    stop_reason = self._after_epoch(trial, config, model, line)
                    if stop_reason is not None:
                        self._end_trial(trial, config, stop_reason)
                    self._save(state, model, optimizer, scheduler)
                    files.append_metrics(metrics_path, line)
                    files.save_weights(self.run_dir / files.LAST_FILE, model,
                                       {"trial": trial, "epoch": line["epoch"]})
                    if bar is not None:
                        bar.set_postfix(epoch=f"{line['epoch']}/{config.epochs}",
                                        loss=f"{line['loss']:.4f}",
                                        val_em=f"{line['val_exact_match']:.3f}")
                    epochs_this_session += 1
                    if stop_reason is not None:
                        break
                    if max_epochs_this_session is not None and \
                            epochs_this_session >= max_epochs_this_session:
                        return False
            finally:
                if bar is not None:
                    bar.close()
            if stop_reason is None:  # epochs already exhausted at resume time
                self._end_trial(trial, config, "max_epochs")
                self._save(state, model, optimizer, scheduler)
            if max_epochs_this_session is not None and \
                    epochs_this_session >= max_epochs_this_session and not state["done"]:
                return False
        return True

    def _bar(self, trial, config, steps_per_epoch, epoch):
        if not self.progress:
            return None
        from crasp.util.progress import progress_bar

        label = f"trial {trial + 1}/{len(self.trials)} " if len(self.trials) > 1 else ""
        return progress_bar(total=config.epochs * steps_per_epoch,
                            initial=epoch * steps_per_epoch,
                            desc=f"{label}{self.config.language} d{config.depth} {config.posenc}",
                            unit="step", leave=True)

    def _epoch(self, trial, config, model, optimizer, scheduler, guard, bar) -> dict[str, Any]:
        state = self.state
        epoch = state["epoch"]
        rng = np.random.default_rng([config.seed, trial, epoch])
        batches = self.train_split.train_batches(config.batch_size, rng)
        model.train()
        start = time.perf_counter()
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        exact = torch.zeros((), dtype=torch.int64, device=self.device)
        labelled = tokens = 0
        for batch in batches:
            if guard.stop:
                raise files.TrainingInterrupted(self.run_dir, epoch)
            batch = batch.to(self.device)
            logits = model(batch.tokens)
            loss = masked_loss(logits.float(), batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            scheduler.step()
            with torch.no_grad():  # running train metrics, summed on the device (no sync)
                right = (logits.detach() > 0) == (batch.labels > 0.5)
                exact += (right | ~batch.mask).all(dim=-1).sum()
                loss_sum += loss.detach().double() * batch.n_labelled
            labelled += batch.n_labelled
            tokens += batch.n_tokens
            state["step"] += 1
            if bar is not None:
                bar.update(1)
        loss_mean = float(loss_sum) / max(1, labelled)
        exact_count = int(exact)
        train_time = time.perf_counter() - start
        val = evaluate(model, self.val_split, self.device, config.eval_batch_tokens)
        epoch_time = time.perf_counter() - start
        state["epoch"] = epoch + 1
        state["elapsed"] += epoch_time
        return {"trial": trial, "epoch": epoch + 1, "step": state["step"],
                "lr": scheduler.get_last_lr()[0],
                "loss": loss_mean,
                "train_exact_match": exact_count / self.train_split.n,
                "val_exact_match": val.exact_match, "val_token_accuracy": val.token_accuracy,
                "val_loss": val.loss,
                "epoch_time_s": epoch_time, "train_time_s": train_time,
                "elapsed_s": state["elapsed"],
                "tokens_per_s": tokens / train_time if train_time > 0 else 0.0,
                "strings_per_s": self.train_split.n / train_time if train_time > 0 else 0.0,
                "_val": val}

    def _after_epoch(self, trial, config, model, line) -> str | None:
        state = self.state
        val: SplitMetrics = line.pop("_val")
        key = list(val.key())
        state["history"].append(line)
        if state["trial_best"] is None or key > state["trial_best"]["key"]:
            state["trial_best"] = {"key": key, "epoch": line["epoch"],
                                   "val_exact_match": val.exact_match,
                                   "val_token_accuracy": val.token_accuracy}
            state["since_improvement"] = 0
            state.setdefault("improvements", []).append(
                improvement_record(trial, line, val, self._test_bins(model, config)))
        else:
            state["since_improvement"] += 1
        if state["best"] is None or key > state["best"]["key"]:
            state["best"] = {"key": key, "trial": trial, "epoch": line["epoch"],
                             "val_exact_match": val.exact_match,
                             "val_token_accuracy": val.token_accuracy}
            files.save_weights(self.run_dir / files.BEST_FILE, model,
                               {"trial": trial, "epoch": line["epoch"],
                                "val_exact_match": val.exact_match})
        if val.perfect:
            return "success"
        if config.patience and state["since_improvement"] >= config.patience:
            return "patience"
        if state["epoch"] >= config.epochs:
            return "max_epochs"
        return None

    def _test_bins(self, model, config) -> dict[str, dict[str, float]]:
        """Every test bin scored by ``model`` (the trainer's metrics), keyed by split name."""
        bins = {}
        for split in self.tests:
            metrics = evaluate(model, split, self.device, config.eval_batch_tokens)
            bins[split.name] = {"exact_match": metrics.exact_match,
                                "token_accuracy": metrics.token_accuracy, "n": metrics.n,
                                "loss": metrics.loss}
        return bins

    def _end_trial(self, trial, config, reason) -> None:
        state = self.state
        best = state["trial_best"] or {}
        state["trial_summaries"].append({
            "trial": trial, "overrides": _overrides(self.config, trial),
            "epochs": state["epoch"], "best_epoch": best.get("epoch"),
            "val_exact_match": best.get("val_exact_match"),
            "val_token_accuracy": best.get("val_token_accuracy"),
            "success": reason == "success", "stopped": reason})
        if reason == "success" or trial + 1 >= len(self.trials) or self.only_trial is not None:
            state["done"] = True
        else:
            state.update(trial=trial + 1, epoch=0, step=0, trial_best=None, since_improvement=0)

    # ------------------------------------------------------------------ results
    def finish(self, language, data) -> dict[str, Any]:
        state = self.state
        best = state["best"]
        trial = best["trial"]
        config = self.trials[trial]
        start = time.perf_counter()
        model = build_model(config, len(self.vocab))
        files.load_weights(self.run_dir / files.BEST_FILE, model)
        model.to(self.device)
        val = evaluate(model, self.val_split, self.device, config.eval_batch_tokens)
        bins = self._test_bins(model, config)
        eval_time = time.perf_counter() - start
        summary = next(s for s in state["trial_summaries"] if s["trial"] == trial)
        results = RunResults(
            bins={name: BinScore(**scores) for name, scores in bins.items()},
            val_exact_match=val.exact_match,
            val_token_accuracy=val.token_accuracy,
            val_n=val.n,
            success=bool(val.perfect),
            epochs=summary["epochs"],
            best_epoch=best["epoch"],
            stopped=summary["stopped"],
            total_epochs=sum(s["epochs"] for s in state["trial_summaries"]),
            best_trial=trial,
            selected=_overrides(self.config, trial),
            trials=state["trial_summaries"],
            search_trial=self.only_trial,
            improvements=state.get("improvements", []),
            wall_time_s=state["elapsed"] + eval_time,
            train_time_s=state["elapsed"],
            eval_time_s=eval_time,
            n_params=count_parameters(model),
            language={"name": getattr(language, "name", self.config.language),
                      "expressible": getattr(language, "expressible", None),
                      "recognition_depth": getattr(language, "recognition_depth", None),
                      "prediction_depth": getattr(language, "prediction_depth", None)},
            data=data,
            environment={"code": code_fingerprint(),
                         "device": str(self.device), "threads": torch.get_num_threads(),
                         "torch": torch.__version__, "python": platform.python_version()},
            config=self.config.to_dict(),
        )
        # results.json marks the run finished (resume returns it, a sweep counts the cell
        # done, an assembly takes the part), so it is written after every other file: a run
        # killed before it is written is not finished, and a resume finishes it
        write_format_model(model, self.vocab, config, self.run_dir)  # --precision runs
        results.write(self.run_dir)
        (self.run_dir / files.STATE_FILE).unlink(missing_ok=True)
        return results.to_json()
