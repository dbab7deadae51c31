"""The trainer from Python: train a model, load a finished run, run a sweep, load a sweep as a
table.

Built on the same functions as ``crasp train``, ``crasp sweep`` and ``crasp report``, so a run
or sweep made here is one the command line resumes, reports and compares, and the reverse.

* ``train(config_or_None, run_dir, **fields) -> TrainResult``: the trained model (the best
  checkpoint, in eval mode, on the CPU), its config, vocabulary and metrics (``results.json``);
* ``load_run(run_dir) -> TrainResult``: the same for a run that has finished;
* ``train_sweep(out_dir, depths=..., languages=..., ...) -> SweepOutcome``: ``crasp sweep``;
* ``load_sweep(*dirs) -> pandas.DataFrame``: one row per cell and test bin (long format).

pandas is an optional dependency (``pip install crasp[pandas]``): only ``load_sweep`` needs it,
and the trainer, the sweeps and the reports run without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from crasp.api_inputs import Inputs, token_batch
from crasp.errors import CraspError
from crasp.train import run as files
from crasp.train.config import TrainConfig
from crasp.train.presets import resolve_preset


@dataclass(frozen=True)
class TrainResult:
    """A finished training run.

    ``model`` is the ``CausalTransformer`` of the best checkpoint (eval mode, CPU); ``config``
    the config that trained it (the best trial's, when the config searched several);
    ``vocab`` the tokens, in the order of their ids (BOS is ``len(vocab)``); ``metrics`` the
    run's ``results.json`` (``metrics["bins"]["41:80"]["exact_match"]`` and so on);
    ``run_dir`` the run directory.
    """

    model: Any
    config: TrainConfig
    vocab: tuple[str, ...]
    metrics: dict
    run_dir: Path

    def exact_match(self, bin_name: str | tuple[int, int]) -> float:
        """Test exact match on one bin, named ``"41:80"`` or ``(41, 80)``."""
        from crasp.languages.datasets import check_bin, format_bin

        name = format_bin(check_bin(bin_name))
        if name not in self.metrics["bins"]:
            raise CraspError(f"no test bin {name} in {self.run_dir} (it has "
                             f"{', '.join(self.metrics['bins'])})")
        return float(self.metrics["bins"][name]["exact_match"])

    def predict(self, inputs: Inputs) -> list[list[bool]]:
        """The model's answer at every token of every input: whether the prefix up to it is in
        the language. ``inputs`` as for ``crasp.evaluate`` (one string, strings, token lists).
        """
        import torch

        batch = token_batch(inputs, self.vocab)
        ids = {token: i for i, token in enumerate(self.vocab)}
        bos = len(self.vocab)
        answers = []
        with torch.no_grad():
            for row, tokens in enumerate(batch):
                unknown = [t for t in tokens if t not in ids]
                if unknown:
                    raise CraspError(f"input {row + 1}: token {unknown[0]!r} is not in the "
                                     f"vocabulary {list(self.vocab)}")
                encoded = torch.tensor([[bos] + [ids[t] for t in tokens]])
                answers.append((self.model(encoded)[0, 1:] > 0).tolist())
        return answers


def train(config: TrainConfig | None = None, run_dir: str | Path | None = None, *,
          preset: str = "default", progress: bool = False, resume: bool = True,
          **fields: Any) -> TrainResult:
    """Train a causal transformer, as ``crasp train`` does, and return the result.

    Give a ``TrainConfig``, or the preset's fields to change as keywords (bins as ``"11:20"``
    or ``(11, 20)``). ``run_dir`` defaults to ``crasp train``'s
    ``runs/<language>-d<depth>-<posenc>-s<seed>``. ``resume=True`` continues an interrupted
    run in ``run_dir`` and returns a finished one without training again.

    >>> import tempfile
    >>> result = train(language="L3", depth=1, train_bin="4:8", test_bins=["9:16"],
    ...                n_train=64, n_test=16, epochs=1, d_model=16, d_ff=32,
    ...                run_dir=tempfile.mkdtemp())
    >>> result.vocab, sorted(result.metrics["bins"])
    (('a', 'b'), ['9:16'])
    """
    from crasp.train.loop import train as train_run

    if config is None:
        config = resolve_preset(preset, **fields)
    elif fields:
        raise CraspError(f"give a config or fields, not both (got {', '.join(sorted(fields))})")
    if run_dir is None:
        from crasp.train.run import default_run_dir

        run_dir = default_run_dir(config)
    if train_run(config, run_dir, progress=progress, resume=resume) is None:
        raise CraspError(f"{run_dir}: training stopped before the end")
    return load_run(run_dir)


def load_run(run_dir: str | Path) -> TrainResult:
    """A finished run (``crasp train -o RUN``) as a ``TrainResult``: the model rebuilt from its
    best checkpoint, with its config, vocabulary and metrics.

    >>> import tempfile
    >>> run_dir = tempfile.mkdtemp()
    >>> _ = train(language="L3", depth=1, train_bin="4:8", test_bins="9:16", n_train=64,
    ...           n_test=16, epochs=1, d_model=16, d_ff=32, run_dir=run_dir)
    >>> result = load_run(run_dir)
    >>> len(result.predict(["aabba", "a b a"])[1])
    3
    """
    run_dir = Path(run_dir)
    results_path = run_dir / files.RESULTS_FILE
    if not results_path.is_file():
        started = (run_dir / files.CONFIG_FILE).is_file()
        raise CraspError(f"{run_dir} holds no finished run (no {files.RESULTS_FILE}); " + (
            f"finish it with crasp train --resume {run_dir}" if started
            else f"train one with crasp train -o {run_dir}"))
    try:
        metrics = files.read_json(results_path)
        config = files.selected_config(metrics["config"], metrics.get("best_trial"),
                                       results_path)
        vocab = tuple(metrics["data"]["vocab"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CraspError(f"{results_path}: unreadable results ({error})") from None
    model = files.selected_model(run_dir, config, len(vocab))
    return TrainResult(model, config, vocab, metrics, run_dir)


def _ints(value: str | int | Sequence[int], what: str) -> list[int]:
    from crasp.train import sweep as sweeps

    if isinstance(value, str):
        return sweeps.parse_int_range(value, what)
    return [value] if isinstance(value, int) else [int(v) for v in value]


def _names(value: str | Sequence[str], parse) -> list[str]:
    return parse(value) if isinstance(value, str) else list(value)


def train_sweep(out_dir: str | Path, *, depths: str | Sequence[int], languages: str | Sequence[str],
          posenc: str | Sequence[str] = "nope", seeds: str | int | Sequence[int] = 1,
          grid: Mapping[str, Any] | None = None, preset: str = "default", jobs: int = 1,
          progress: bool = False):
    """Train every cell of depth x language x encoding x seed x grid, resumably, exactly as
    ``crasp sweep`` does (the same cells, ids and directory); returns the ``SweepOutcome``.

    ``depths``, ``languages``, ``posenc`` and ``seeds`` take the CLI's spellings (``"1:6"``,
    ``"L3:L8"``, ``"nope,rope"``, ``3`` = seeds 0..2) or lists; ``grid`` maps a config field to
    one value or a list of values to try (``{"epochs": 1, "lr": [1e-3, 3e-4]}``).

    >>> import tempfile
    >>> outcome = train_sweep(tempfile.mkdtemp(), depths="1:2", languages="L3", grid={
    ...     "train_bin": "4:8", "test_bins": "9:16", "n_train": 64, "n_test": 16, "epochs": 1,
    ...     "d_model": 16, "d_ff": 32})
    >>> outcome.ran, outcome.failed
    (2, [])
    """
    from crasp.train import sweep as sweeps

    seed_list = (sweeps.parse_seeds(seeds) if isinstance(seeds, str) else
                 list(range(seeds)) if isinstance(seeds, int) else list(seeds))
    resolve, config_cls = sweeps.default_resolver()
    spec = sweeps.SweepSpec(
        depths=_ints(depths, "depths"), languages=_names(languages, sweeps.parse_languages),
        posencs=_names(posenc, sweeps.parse_names), seeds=seed_list,
        grid={key: list(value) if isinstance(value, list) else [value]
              for key, value in (grid or {}).items()},
        preset=preset)
    sweeps.check_languages(spec.languages)
    cells = sweeps.enumerate_cells(spec, resolve, config_cls)
    sweeps.record_spec(out_dir, spec, cells, None)
    return sweeps.run_sweep(cells, out_dir, jobs=jobs, progress=progress)


def load_sweep(*dirs: str | Path):
    """Finished cells of one or more sweep directories as a pandas ``DataFrame`` in long
    format: one row per cell and test bin, with the cell's ``id``, ``language``, ``depth``,
    ``posenc``, ``seed``, its grid point (one column per grid field), ``bin`` (``"41:80"``,
    ``"351:400@skewed"``), ``bin_lo``, ``bin_hi``, ``distribution`` (``"uniform"`` or the test
    distribution's name), ``exact_match``, ``token_accuracy``, ``n`` and ``val_exact_match``.

    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> _ = train_sweep(out, depths=[1, 2], languages=["L3"], grid={
    ...     "train_bin": (4, 8), "test_bins": [[(9, 16), (17, 24)]], "n_train": 64,
    ...     "n_test": 16, "epochs": 1, "d_model": 16, "d_ff": 32})
    >>> table = load_sweep(out)
    >>> table.groupby("depth").size().to_dict(), sorted(set(table["bin"]))
    ({1: 2, 2: 2}, ['17:24', '9:16'])
    """
    try:
        import pandas
    except ImportError:
        raise CraspError("load_sweep needs pandas: pip install 'crasp[pandas]'") from None
    from crasp.languages.datasets import parse_test_bin
    from crasp.train.report import load_sweeps

    rows = []
    for cell in load_sweeps(list(dirs)).cells:
        for name, values in cell.results.bins.items():
            lo, hi, distribution = parse_test_bin(name)
            rows.append({"id": cell.id, "sweep_dir": cell.sweep_dir, "language": cell.language,
                         "depth": cell.depth, "posenc": cell.posenc, "seed": cell.seed,
                         **cell.hyper, "bin": name, "bin_lo": lo, "bin_hi": hi,
                         "distribution": distribution,
                         "exact_match": values.exact_match,
                         "token_accuracy": values.token_accuracy, "n": values.n,
                         "val_exact_match": cell.val_exact_match})
    return pandas.DataFrame(rows)
