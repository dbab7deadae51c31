"""The compiled model's ``config.json`` as a typed value, and the one tensor-name schema.

``ModelConfig.from_json`` is the only reader of the JSON object (every check of
``docs/model-format.md``: format and version, keys, types, ranges, consistency), and
``to_json`` writes it back unchanged, in the same key order; ``compile_program`` builds one, the
loader validates one, the executor, the exporter, the decompiler and the summary read one. A
model's tensors are named by the functions below and nowhere else (``expected_shapes`` lists
them all, in file order): the emitter, the loader, the executor, the ONNX exporter, the
decompiler and the float realization's checkpoint use them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crasp.errors import CraspError

FORMAT = "crasp-transformer"
VERSION = 2
POSITIONAL_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
"""Version 2 added the embedding row ``other_id`` for tokens outside the vocabulary; a version 1
model (without it) still loads, and rejects such tokens. Version 3 adds the optional positional
components (``periodic_moduli``, ``alibi``); the compiler writes it only for a model that has
them, so a NoPE model stays version 2."""
MAX_MODULUS = 1 << 16
"""The most rows a periodic table may have when a model is read (a bound on memory)."""
CONFIG_FILE = "config.json"
MIN_TOTAL_BITS, MAX_TOTAL_BITS = 2, 53

EMBED = "embed"
OUT_WEIGHT = "out.weight"
OUT_BIAS = "out.bias"
ATTENTION_PARTS = ("q", "k", "v", "o")


def attention(layer: int, part: str) -> str:
    """``layers.{layer}.attn.{part}``, part one of q, k, v (rows: head dimensions) or o."""
    return f"layers.{layer}.attn.{part}"


def periodic(modulus: int) -> str:
    """``pos.periodic.{modulus}``: the periodic table of ``modulus`` rows (version 3)."""
    return f"pos.periodic.{modulus}"


def alibi(layer: int) -> str:
    """``layers.{layer}.attn.alibi``: the ALiBi slope of each head (version 3)."""
    return f"layers.{layer}.attn.alibi"


def ffn(layer: int, index: int, kind: str) -> str:
    """``layers.{layer}.ffn.{index}.{kind}``: linear map ``index`` (0 reads the residual
    stream, the last writes it), kind ``weight`` or ``bias``."""
    return f"layers.{layer}.ffn.{index}.{kind}"


class ModelFormatError(CraspError):
    """A model directory that is missing, truncated, or does not match the format."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Precision:
    total_bits: int   # p: bits of a number, sign included
    frac_bits: int    # s: bits after the binary point


KEYS = ("format", "version", "vocab", "bos_id", "other_id", "d_model", "n_layers", "n_heads",
        "d_head", "ffn_widths", "precision", "precision_set_by", "depth", "residual_labels",
        "program_sha256", "periodic_moduli", "alibi", "posenc", "tl_pos_depth", "program_file",
        "answer", "d_model_bound", "layer_table")
"""Every key of ``config.json`` the format names, in the order the compiler writes them."""
POSITIONAL_KEYS = ("periodic_moduli", "alibi", "posenc", "tl_pos_depth")
NOPE_KEYS = tuple(key for key in KEYS if key not in POSITIONAL_KEYS)
"""The keys of a model without positions (version 1 or 2)."""


@dataclass(frozen=True)
class ModelConfig:
    """Every key of ``config.json`` the format names; ``extra`` keeps any other key a file
    holds, so that reading and writing it back loses nothing."""

    version: int
    vocab: tuple[str, ...]
    bos_id: int
    other_id: int | None          # version 2: the row for tokens outside the vocabulary
    d_model: int
    n_layers: int
    n_heads: int
    d_head: int
    ffn_widths: tuple[tuple[int, ...], ...]
    precision: Precision
    depth: int
    residual_labels: tuple[str, ...]
    program_sha256: str
    periodic_moduli: tuple[int, ...] = ()  # version 3: one periodic table per modulus
    alibi: bool = False                    # version 3: per-head ALiBi slopes
    posenc: str | None = None              # informational: the compiler's --posenc
    tl_pos_depth: int | None = None        # informational: Knee-Deep's TL[◁#]^pos depth
    # The compiler's informational keys: a reader may ignore them (docs/model-format.md), so
    # they are kept as written, unchecked, and None where a file lacks them.
    precision_set_by: str | None = None   # the quantity that needs the most bits
    program_file: str | None = None
    answer: str | None = None             # the answer's definition name
    d_model_bound: int | None = None      # #Booleans + #comparisons + |vocab| + 3
    layer_table: list[dict] | None = None  # per layer: definitions, tests, ffn widths
    extra: dict = field(default_factory=dict)
    order: tuple[str, ...] = NOPE_KEYS
    """The keys ``to_json`` writes, in this order: a file's own keys when it was read, so
    that it is written back unchanged (a version 1 file has no ``other_id``, a model from
    elsewhere none of the informational keys)."""

    @property
    def embedding_rows(self) -> int:
        """Tokens, BOS, and (version 2) the row of tokens outside the vocabulary."""
        return len(self.vocab) + (2 if self.version >= 2 else 1)

    @classmethod
    def from_json(cls, config: Any, where: str) -> ModelConfig:
        """The checked config (``ModelFormatError`` naming ``where/config.json`` otherwise)."""
        def fail(message: str):
            raise ModelFormatError(f"{where}/{CONFIG_FILE}: {message}")

        if not isinstance(config, dict):
            fail("is not a JSON object")
        if config.get("format") != FORMAT:
            fail(f"'format' is {config.get('format')!r}, expected {FORMAT!r} (not a crasp "
                 f"model?)")
        if not _is_int(config.get("version")) or config["version"] not in READABLE_VERSIONS:
            fail(f"format version {config.get('version')!r} is not supported (this crasp reads "
                 f"versions {', '.join(map(str, READABLE_VERSIONS))})")
        minimum = {"bos_id": 0, "d_model": 1, "n_layers": 0, "n_heads": 0, "d_head": 0,
                   "depth": 0}
        for key, low in minimum.items():
            if key not in config:
                fail(f"missing key {key!r}")
            if not _is_int(config[key]) or config[key] < low:
                fail(f"{key!r} must be an integer >= {low}, got {config[key]!r}")
        for key in ("vocab", "ffn_widths", "residual_labels", "precision", "program_sha256"):
            if key not in config:
                fail(f"missing key {key!r}")
        vocab = config["vocab"]
        if (not isinstance(vocab, list) or not all(isinstance(t, str) and t for t in vocab)
                or len(set(vocab)) != len(vocab)):
            fail("'vocab' must be a list of distinct non-empty token strings")
        if config["bos_id"] != len(vocab):
            fail(f"'bos_id' must be len(vocab) = {len(vocab)} (the row after the tokens), got "
                 f"{config['bos_id']}")
        if config["version"] >= 2 and (not _is_int(config.get("other_id"))
                                       or config["other_id"] != len(vocab) + 1):
            fail(f"'other_id' must be len(vocab) + 1 = {len(vocab) + 1} (the row after BOS), "
                 f"got {config.get('other_id')!r}")
        widths = config["ffn_widths"]
        if (not isinstance(widths, list) or len(widths) != config["n_layers"]
                or not all(isinstance(w, list) and w and all(_is_int(x) and x > 0 for x in w)
                           for w in widths)):
            fail(f"'ffn_widths' must hold one non-empty list of positive hidden widths per "
                 f"layer ({config['n_layers']} layers)")
        labels = config["residual_labels"]
        if (not isinstance(labels, list) or len(labels) != config["d_model"]
                or not all(isinstance(label, str) for label in labels)):
            fail(f"'residual_labels' must be a list of d_model = {config['d_model']} strings")
        precision = config["precision"]
        if (not isinstance(precision, dict) or not _is_int(precision.get("total_bits"))
                or not _is_int(precision.get("frac_bits"))
                or not 0 <= precision["frac_bits"] < precision["total_bits"]
                or not MIN_TOTAL_BITS <= precision["total_bits"] <= MAX_TOTAL_BITS):
            fail(f"'precision' must be {{\"total_bits\": p, \"frac_bits\": s}} with 0 <= s < p "
                 f"and {MIN_TOTAL_BITS} <= p <= {MAX_TOTAL_BITS}")
        if config["n_layers"] and not config["n_heads"]:
            fail("a model with layers needs 'n_heads' >= 1")
        moduli = config.get("periodic_moduli", [])
        if config["version"] < 3 and ("periodic_moduli" in config or "alibi" in config):
            fail("'periodic_moduli' and 'alibi' need format version 3")
        if (not isinstance(moduli, list) or not all(_is_int(m) and 1 <= m <= MAX_MODULUS
                                                    for m in moduli)
                or len(set(moduli)) != len(moduli)):
            fail(f"'periodic_moduli' must be a list of distinct integers in [1, {MAX_MODULUS}]")
        if not isinstance(config.get("alibi", False), bool):
            fail("'alibi' must be true or false")
        return cls(
            version=config["version"], vocab=tuple(vocab), bos_id=config["bos_id"],
            other_id=config.get("other_id"), d_model=config["d_model"],
            n_layers=config["n_layers"], n_heads=config["n_heads"], d_head=config["d_head"],
            ffn_widths=tuple(tuple(w) for w in widths),
            precision=Precision(precision["total_bits"], precision["frac_bits"]),
            depth=config["depth"], residual_labels=tuple(labels),
            program_sha256=config["program_sha256"],
            periodic_moduli=tuple(moduli), alibi=config.get("alibi", False),
            posenc=config.get("posenc"), tl_pos_depth=config.get("tl_pos_depth"),
            precision_set_by=config.get("precision_set_by"),
            program_file=config.get("program_file"), answer=config.get("answer"),
            d_model_bound=config.get("d_model_bound"), layer_table=config.get("layer_table"),
            extra={k: v for k, v in config.items() if k not in KEYS}, order=tuple(config))

    def to_json(self) -> dict:
        """The JSON object this config was read from (or, for one built by the compiler, the
        one it writes): the keys of ``order``, then any of ``extra`` not among them."""
        values = {
            "format": FORMAT, "version": self.version, "vocab": list(self.vocab),
            "bos_id": self.bos_id, "other_id": self.other_id, "d_model": self.d_model,
            "n_layers": self.n_layers, "n_heads": self.n_heads, "d_head": self.d_head,
            "ffn_widths": [list(w) for w in self.ffn_widths],
            "precision": {"total_bits": self.precision.total_bits,
                          "frac_bits": self.precision.frac_bits},
            "precision_set_by": self.precision_set_by, "depth": self.depth,
            "residual_labels": list(self.residual_labels),
            "program_sha256": self.program_sha256,
            "periodic_moduli": list(self.periodic_moduli), "alibi": self.alibi,
            "posenc": self.posenc, "tl_pos_depth": self.tl_pos_depth,
            "program_file": self.program_file,
            "answer": self.answer, "d_model_bound": self.d_model_bound,
            "layer_table": self.layer_table, **self.extra,
        }
        return {key: values[key] for key in [*self.order,
                                             *(k for k in self.extra if k not in self.order)]}


def expected_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor's name and shape, as the config determines them."""
    d, inner = config.d_model, config.n_heads * config.d_head
    shapes = {EMBED: (config.embedding_rows, d)}
    for modulus in config.periodic_moduli:
        shapes[periodic(modulus)] = (modulus, d)
    for layer, widths in enumerate(config.ffn_widths):
        for part in ("q", "k", "v"):
            shapes[attention(layer, part)] = (inner, d)
        shapes[attention(layer, "o")] = (d, inner)
        if config.alibi:
            shapes[alibi(layer)] = (config.n_heads,)
        sizes = [d, *widths, d]
        for m in range(len(sizes) - 1):
            shapes[ffn(layer, m, "weight")] = (sizes[m + 1], sizes[m])
            shapes[ffn(layer, m, "bias")] = (sizes[m + 1],)
    shapes[OUT_WEIGHT], shapes[OUT_BIAS] = (d,), ()
    return shapes
