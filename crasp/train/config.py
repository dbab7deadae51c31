"""The training configuration: one dataclass holding every knob of a run.

``TrainConfig`` is plain data (no torch). ``validate()`` refuses impossible settings with a
``CraspError`` before any work; ``to_dict``/``from_dict`` round-trip through JSON exactly, so
the ``config.json`` of a run directory rebuilds the same run.

Token ids: the language's vocabulary in order (``task.vocab``) gets ids ``0 .. V-1``; BOS is
``V`` and PAD is ``V + 1``. Position 0 of every sequence is BOS and carries no label; the label
of position ``t >= 1`` says whether the prefix ending at token ``t`` is in the language.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from crasp.errors import CraspError
from crasp.languages.datasets import (MAX_LENGTH, MAX_STRINGS, UNIFORM, check_size, parse_bin,
                                      parse_test_bin, parse_test_bins)

POSENCS = ("nope", "rope", "alibi", "learned", "sinusoidal", "sinusoidal-rational", "t5", "rpe-log",
           "rpe-lin")
RELATIVE_POSENCS = ("rpe-log", "rpe-lin")   # a learned bias per layer (crasp.train.posenc)
ATTENTIONS = ("softmax", "dp-free", "hardmax")
NORMS = ("pre", "post", "none")
ACTIVATIONS = ("relu", "gelu")
SCHEDULES = ("constant", "linear", "cosine")
DEVICES = ("auto", "cpu", "cuda")
ALIBI_IMPLS = ("mask", "fold")
LARGEST = {"depth": 1_000, "d_model": 1 << 16, "n_heads": 1 << 10, "d_ff": 1 << 18,
           "batch_size": 1 << 20, "epochs": 1_000_000, "n_train": MAX_STRINGS,
           "n_test": MAX_STRINGS, "threads": 1_024, "seed": (1 << 63) - 1}
"""Upper bounds of the sizes, far above any run here, so that a mistyped size is one message,
not an allocation error after the run directory is made (or a crash: 99,999 threads). A seed
(and a data seed) is at most what ``torch.manual_seed`` takes."""


def _test_bin(value: Any) -> tuple:
    """A test bin as stored in a config: ``(lo, hi)`` for the uniform distribution (so configs
    and cell ids from before test distributions are unchanged), ``(lo, hi, name)`` otherwise."""
    if isinstance(value, str):
        value = parse_test_bin(value)
    elif isinstance(value, (list, tuple)) and len(value) == 3:
        value = parse_test_bin(f"{_pair(value[:2], 'test_bins')[0]}:{value[1]}@{value[2]}")
    else:
        return _pair(value, "test_bins")
    lo, hi, distribution = value
    return (lo, hi) if distribution == UNIFORM else (lo, hi, distribution)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pair(value: Any, name: str) -> tuple[int, int]:
    if isinstance(value, str):
        value = parse_bin(value)
    try:
        lo, hi = value
        if isinstance(lo, bool) or isinstance(hi, bool):
            raise TypeError
        if int(lo) != lo or int(hi) != hi:
            raise ValueError
        return int(lo), int(hi)
    except (TypeError, ValueError, OverflowError):   # OverflowError: int(inf)
        raise CraspError(f"{name}: expected a length bin LO:HI, got {value!r}") from None


@dataclass
class TrainConfig:
    """Every knob of a training run. Field docs are in docs/train.md (config reference)."""

    # what to learn
    preset: str = "default"
    language: str = "L5"
    dialect: Literal["crasp", "hahn"] = "crasp"  # how a PROG.crasp language is read
    # model
    depth: int = 3
    posenc: Literal["nope", "rope", "alibi", "learned", "sinusoidal", "sinusoidal-rational",
                    "t5", "rpe-log", "rpe-lin"] = "nope"
    d_model: int = 64
    n_heads: int = 4
    d_ff: int = 256
    dropout: float = 0.0
    norm: Literal["pre", "post", "none"] = "pre"
    activation: Literal["relu", "gelu"] = "relu"
    rope_base: float = 10000.0
    rope_fraction: float = 1.0
    alibi_slopes: list[float] | None = None
    alibi_impl: Literal["mask", "fold"] = "mask"
    moduli: list[int] | None = None              # periodic tables (posenc.PeriodicTables)
    t5_buckets: int = 32                         # T5 bias: buckets (half of them exact)
    t5_max_distance: int = 128                   # T5 bias: distances beyond share the last bucket
    attention: Literal["softmax", "dp-free", "hardmax"] = "softmax"
    qk_rank: int | None = None                   # rank of each head's W_Q W_K^T (default d/H)
    ffn_widths: list[list[int]] | None = None   # per-layer hidden widths (default [[d_ff]] * depth)
    init_from: str | None = None                 # a checkpoint directory or "compiled" (init.py)
    precision: str | None = None                 # "P.S": the model format's fixed-precision class
    # optimisation
    lr: float = 1e-3
    batch_size: int = 32
    epochs: int = 20
    warmup_steps: int = 100
    lr_schedule: Literal["constant", "linear", "cosine"] = "constant"
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    grad_clip: float = 1.0
    patience: int = 6
    # data
    train_bin: tuple[int, int] = (201, 250)
    test_bins: list[tuple] = field(
        default_factory=lambda: [(251, 300), (301, 350), (351, 400)])
    n_train: int = 2000
    n_test: int = 500
    val_fraction: float = 0.2
    data_seed: int | None = None
    # search (knee-deep): override dicts tried in order; the first to reach 100% validation
    # exact match ends the search, else the best one is kept
    search: list[dict[str, Any]] | None = None
    # run
    seed: int = 0
    device: Literal["auto", "cpu", "cuda"] = "auto"
    threads: int = 1
    eval_batch_tokens: int = 16384

    # ------------------------------------------------------------------ dict / JSON
    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["train_bin"] = list(self.train_bin)
        data["test_bins"] = [list(b) for b in self.test_bins]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        if not isinstance(data, dict):
            raise CraspError(f"a training config must be a JSON object, not "
                             f"{type(data).__name__ if data is not None else 'null'}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise CraspError(f"unknown config field(s): {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
        return cls(**data).normalized()

    @classmethod
    def from_json(cls, text: str) -> "TrainConfig":
        return cls.from_dict(json.loads(text))

    def replace(self, **changes: Any) -> "TrainConfig":
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise CraspError(f"unknown config field(s): {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
        return dataclasses.replace(self, **changes).normalized()

    # ------------------------------------------------------------------ checks
    def normalized(self) -> "TrainConfig":
        """Same config with canonical types (tuples for bins, floats for floats). A value of
        the wrong shape is left as it is, for ``validate`` to refuse with its message (a
        config file may hold anything)."""
        c = dataclasses.replace(self)
        c.train_bin = _pair(c.train_bin, "train_bin")
        if isinstance(c.test_bins, str):
            c.test_bins = parse_test_bins(c.test_bins)
        if not isinstance(c.test_bins, (list, tuple, type(None))):
            raise CraspError(f"test_bins: expected a list of length bins, got {c.test_bins!r}")
        c.test_bins = [_test_bin(b) for b in (c.test_bins or [])]
        for name in ("dropout", "rope_base", "rope_fraction", "lr", "weight_decay",
                     "adam_beta1", "adam_beta2", "grad_clip", "val_fraction"):
            value = getattr(c, name)
            if _is_number(value):
                setattr(c, name, float(value))
        if isinstance(c.alibi_slopes, (list, tuple)):
            c.alibi_slopes = [float(s) if _is_number(s) else s for s in c.alibi_slopes]
        if isinstance(c.ffn_widths, (list, tuple)):
            c.ffn_widths = [list(w) if isinstance(w, (list, tuple)) else w for w in c.ffn_widths]
        if isinstance(c.search, (list, tuple)):
            c.search = [dict(e) if isinstance(e, dict) else e for e in c.search]
        return c

    def validate(self) -> "TrainConfig":
        """Refuse impossible settings with a clear message. Returns ``self``."""
        def need(ok: bool, message: str) -> None:
            if not ok:
                raise CraspError(message)

        def is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)

        def is_num(v):
            return _is_number(v) and math.isfinite(v)

        need(is_int(self.depth) and 1 <= self.depth <= LARGEST["depth"],
             f"depth must be an integer from 1 to {LARGEST['depth']:,}, got {self.depth!r}")
        need(self.posenc in POSENCS,
             f"unknown positional encoding {self.posenc!r} (choose from {', '.join(POSENCS)})")
        need(self.norm in NORMS, f"norm must be 'pre', 'post' or 'none', got {self.norm!r}")
        need(self.activation in ACTIVATIONS,
             f"activation must be one of {', '.join(ACTIVATIONS)}, got {self.activation!r}")
        need(self.lr_schedule in SCHEDULES,
             f"lr_schedule must be one of {', '.join(SCHEDULES)}, got {self.lr_schedule!r}")
        need(self.device in DEVICES,
             f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        need(self.attention in ATTENTIONS,
             f"attention must be one of {', '.join(ATTENTIONS)}, got {self.attention!r}")
        need(self.alibi_impl in ALIBI_IMPLS,
             f"alibi_impl must be one of {', '.join(ALIBI_IMPLS)}, got {self.alibi_impl!r}")
        for name in ("d_model", "n_heads", "d_ff", "batch_size", "epochs", "n_train", "n_test",
                     "threads", "eval_batch_tokens"):
            value = getattr(self, name)
            need(is_int(value) and value >= 1, f"{name} must be an integer >= 1, got {value!r}")
            need(value <= LARGEST.get(name, value),
                 f"{name} must be at most {LARGEST.get(name, 0):,}, got {value:,}")
        for name in ("warmup_steps", "patience", "seed"):
            value = getattr(self, name)
            need(is_int(value) and value >= 0, f"{name} must be an integer >= 0, got {value!r}")
        need(self.data_seed is None or (is_int(self.data_seed) and self.data_seed >= 0),
             f"data_seed must be None or an integer >= 0, got {self.data_seed!r}")
        for name in ("seed", "data_seed"):
            value = getattr(self, name)
            need(not is_int(value) or value <= LARGEST["seed"],
                 f"{name} must be at most {LARGEST['seed']:,}, got {value!r}")
        need(self.init_from is None or (isinstance(self.init_from, str) and self.init_from != ""),
             f"init_from must be a checkpoint directory or 'compiled', got {self.init_from!r}")
        need(self.d_model % self.n_heads == 0,
             f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        need(is_num(self.dropout) and 0 <= self.dropout < 1,
             f"dropout must be in [0, 1), got {self.dropout!r}")
        need(is_num(self.lr) and self.lr > 0, f"lr must be > 0, got {self.lr!r}")
        need(is_num(self.weight_decay) and self.weight_decay >= 0,
             f"weight_decay must be >= 0, got {self.weight_decay!r}")
        need(is_num(self.grad_clip) and self.grad_clip >= 0,
             f"grad_clip must be >= 0 (0 = no clipping), got {self.grad_clip!r}")
        for name in ("adam_beta1", "adam_beta2"):
            value = getattr(self, name)
            need(is_num(value) and 0 <= value < 1, f"{name} must be in [0, 1), got {value!r}")
        need(is_num(self.val_fraction) and 0 < self.val_fraction < 1,
             f"val_fraction must be in (0, 1), got {self.val_fraction!r}")
        need(is_num(self.rope_base) and self.rope_base > 1,
             f"rope_base must be > 1, got {self.rope_base!r}")
        need(is_num(self.rope_fraction) and 0 < self.rope_fraction <= 1,
             f"rope_fraction must be in (0, 1], got {self.rope_fraction!r}")
        need(self.qk_rank is None or (is_int(self.qk_rank) and 1 <= self.qk_rank <= self.d_model),
             f"qk_rank must be None or an integer in 1..d_model ({self.d_model}), "
             f"got {self.qk_rank!r}")
        if self.attention == "dp-free":
            need(self.qk_rank is None, "qk_rank is set but attention 'dp-free' has no W_Q W_K^T")
            need(self.posenc != "rope",
                 "attention 'dp-free' has no queries or keys for RoPE to rotate; use a bias "
                 "encoding (alibi, t5, rpe-log, rpe-lin) or nope")
        need(is_int(self.t5_buckets) and self.t5_buckets >= 2,
             f"t5_buckets must be an integer >= 2, got {self.t5_buckets!r}")
        need(is_int(self.t5_max_distance) and self.t5_max_distance > self.t5_buckets // 2,
             f"t5_max_distance must be an integer > t5_buckets // 2 ({self.t5_buckets // 2}), "
             f"got {self.t5_max_distance!r}")
        head_dim = self.qk_rank or self.d_model // self.n_heads
        if self.posenc == "rope":
            need(rope_dims(head_dim, self.rope_fraction) >= 2,
                 f"rope_fraction {self.rope_fraction} of a head of {head_dim} query/key dims "
                 f"rotates no pair of dimensions")
        if self.posenc == "sinusoidal":
            need(self.d_model % 2 == 0, "sinusoidal encoding needs an even d_model")
        if self.alibi_slopes is not None:
            need(isinstance(self.alibi_slopes, (list, tuple))
                 and len(self.alibi_slopes) == self.n_heads
                 and all(is_num(s) and s >= 0 for s in self.alibi_slopes),
                 f"alibi_slopes must be {self.n_heads} non-negative numbers (one per head), "
                 f"got {self.alibi_slopes!r}")
            need(self.posenc == "alibi", "alibi_slopes is set but posenc is not 'alibi'")
        if self.posenc == "sinusoidal-rational":
            need(bool(self.moduli), "posenc sinusoidal-rational needs the moduli (--moduli 2,3)")
        if self.moduli is not None:
            need(isinstance(self.moduli, list) and all(is_int(m) and 1 <= m <= 1 << 16
                                                       for m in self.moduli)
                 and len(set(self.moduli)) == len(self.moduli),
                 f"moduli must be distinct integers in 1..65536, got {self.moduli!r}")
            need(self.posenc in ("sinusoidal-rational", "alibi"),
                 "moduli are set but posenc is neither 'sinusoidal-rational' nor 'alibi'")
        if self.ffn_widths is not None:
            need(isinstance(self.ffn_widths, list) and len(self.ffn_widths) == self.depth
                 and all(isinstance(w, list) and w
                         and all(is_int(x) and 1 <= x <= LARGEST["d_ff"] for x in w)
                         for w in self.ffn_widths),
                 f"ffn_widths must hold one non-empty list of widths from 1 to "
                 f"{LARGEST['d_ff']:,} per layer ({self.depth} layers), got {self.ffn_widths!r}")
        if self.precision is not None:
            self._validate_precision(need)
        lo, hi = self.train_bin
        need(1 <= lo <= hi <= MAX_LENGTH,
             f"train_bin {lo}:{hi}: need 1 <= LO <= HI <= {MAX_LENGTH:,}")
        need(len(self.test_bins) >= 1, "give at least one test bin")
        seen = set()
        for tlo, thi, *distribution in self.test_bins:
            need(1 <= tlo <= thi <= MAX_LENGTH,
                 f"test bin {tlo}:{thi}: need 1 <= LO <= HI <= {MAX_LENGTH:,}")
            need(thi < lo or tlo > hi,
                 f"test bin {tlo}:{thi} overlaps the train bin {lo}:{hi}; test bins must hold "
                 f"other lengths (the validation split plays the role of a train-length test)")
            key = (tlo, thi, *distribution)
            need(key not in seen, f"test bin {test_bin_name(key)} is given twice")
            seen.add(key)
        check_size(self.n_train, self.train_bin, self.n_test,
                   [(tlo, thi) for tlo, thi, *_ in self.test_bins])
        n_val = int(round(self.n_train * self.val_fraction))
        need(1 <= n_val < self.n_train,
             f"n_train={self.n_train} with val_fraction={self.val_fraction} leaves no "
             f"training or no validation strings")
        if self.search is not None:
            need(isinstance(self.search, list) and len(self.search) >= 1
                 and all(isinstance(e, dict) for e in self.search),
                 "search must be a non-empty list of override dicts")
            for entry in self.search:
                bad = sorted(set(entry) - SEARCHABLE)
                need(not bad, f"search entries may set only {', '.join(sorted(SEARCHABLE))}; "
                              f"got {', '.join(bad)}")
                self.replace(**entry, search=None).validate()
        return self

    def _validate_precision(self, need) -> None:
        """``precision`` trains the model format's class (``crasp.train.fixed_precision``):
        every setting that class lacks is refused, and the width must keep its arithmetic
        exact in float64."""
        from crasp.train.fixed_precision import MAX_EXACT_BITS, exactness_bits, parse_precision

        total_bits, _ = parse_precision(self.precision)
        fixed = {"norm": "none", "activation": "relu", "posenc": "nope", "attention": "softmax",
                 "qk_rank": None, "dropout": 0.0, "init_from": None}
        for name, value in fixed.items():
            need(getattr(self, name) == value,
                 f"precision {self.precision} trains the model format's class, which has "
                 f"{name} {value if value is not None else 'unset'}; got {name} "
                 f"{getattr(self, name)!r}")
        bits = exactness_bits(total_bits, self.d_model, self.d_model // self.n_heads)
        need(bits <= MAX_EXACT_BITS,
             f"precision {self.precision} at d_model {self.d_model} with {self.n_heads} "
             f"head(s): a score q.k can need {bits} bits, more than float64's "
             f"{MAX_EXACT_BITS}, so training could not match the format's arithmetic bit for "
             f"bit; use fewer total bits or a smaller width")

    def max_length(self) -> int:
        """The longest string any split can hold (bins' upper ends)."""
        return max([self.train_bin[1]] + [b[1] for b in self.test_bins])

    def trials(self) -> list["TrainConfig"]:
        """The concrete configs a run tries in order (one unless ``search`` is set)."""
        if not self.search:
            return [self]
        return [self.replace(**entry, search=None) for entry in self.search]


# fields a search entry may vary (model size and optimisation, not the data or the task)
SEARCHABLE = frozenset({"d_model", "n_heads", "d_ff", "dropout", "lr", "batch_size",
                        "weight_decay", "warmup_steps", "grad_clip", "epochs"})


def rope_dims(head_dim: int, fraction: float) -> int:
    """Number of rotated dimensions of a head: the fraction, rounded down to an even number."""
    return int(math.floor(head_dim * fraction + 1e-9)) // 2 * 2


ID_NEUTRAL_DEFAULTS: dict[str, Any] = {"t5_buckets": 32, "t5_max_distance": 128,
                                        "attention": "softmax", "qk_rank": None,
                                        "moduli": None, "precision": None}
"""Fields added after sweeps had been run, each with the value that reproduces the behaviour
from before it existed. A sweep cell's id hashes the resolved config without these fields when
they hold that value (``identity_fields``), so the cells of earlier sweeps keep their ids and
resume. These values are therefore fixed for good: a new behaviour needs a new value."""


def identity_fields(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` (a ``to_dict`` mapping) without the fields that sit at their
    ``ID_NEUTRAL_DEFAULTS`` value: what a sweep cell's id is the hash of."""
    return {key: value for key, value in config.items()
            if not (key in ID_NEUTRAL_DEFAULTS and value == ID_NEUTRAL_DEFAULTS[key])}


def architecture_label(config: dict[str, Any]) -> str:
    """The encoding and attention of a run as one label: ``posenc``, then ``+dp-free`` or
    ``+hardmax`` and ``+qkR`` where they differ from the default (``nope``, ``t5+dp-free``,
    ``rope+qk2``). The report keeps runs of different labels apart (one table each), and
    ``crasp.train.theory_bounds`` reads the label to decide whether a theorem applies."""
    label = str(config.get("posenc", "nope"))
    if config.get("attention", "softmax") != "softmax":
        label += f"+{config['attention']}"
    if config.get("qk_rank") is not None:
        label += f"+qk{config['qk_rank']}"
    if config.get("precision") is not None:
        label += f"+fp{config['precision']}"
    return label


def config_fields() -> list[str]:
    return [f.name for f in dataclasses.fields(TrainConfig)]


def test_bin_name(test_bin: tuple) -> str:
    """``(351, 400)`` -> ``351:400``; ``(351, 400, "skewed")`` -> ``351:400@skewed``: the name
    of the test split, of its results and of its report columns."""
    lo, hi, *distribution = test_bin
    return f"{lo}:{hi}" + (f"@{distribution[0]}" if distribution else "")
