"""``crasp train --init-from DIR|compiled``: start training from a checkpoint.

* ``DIR``: a trained run or a float realization (``checkpoint``); its architecture (width,
  heads, normalization, encoding, hidden widths) replaces the config's, and the depths must be
  equal.
* ``compiled``: the language's reference prediction program, compiled to its float
  realization (``realization``) in float32 for the longest length the run sees (the largest
  train or test bin), hence exact on every training, validation and test string before the
  first update. A run deeper than the program gets extra layers of zeros after it, which are
  the identity (each sublayer adds 0 to the residual stream); a shallower run is refused.

Fine-tuning needs a small learning rate: the realization separates d = -1 from d = 0 by 1/(3 (N
+ 1)) in the value projection's units, so a step that moves a value weight by more than about
that (Adam at lr 1e-3 does, in its first steps) can break it; lr 1e-4 keeps L5 exact through
an epoch in the tests.

Weights are matched by token, not by id: the checkpoint's embedding rows are reordered into
the language's vocabulary (BOS and padding rows included), and a language token the
checkpoint lacks is an error.
"""

from __future__ import annotations

import torch

from crasp.errors import CraspError
from crasp.realize.checkpoint import state_dict
from crasp.realize.realization import FloatRealization, realize_float
from crasp.train.checkpoint import load_checkpoint
from crasp.train.config import TrainConfig

COMPILED = "compiled"


def _compiled(config: TrainConfig) -> FloatRealization:
    from crasp.languages import get_language

    language = get_language(config.language, config.dialect)
    if language.prediction_program is None:
        raise CraspError(f"--init-from compiled: language {config.language} has no reference "
                         f"prediction program to compile")
    realization = realize_float(language.prediction_program.load(), config.max_length(),
                                "float32")
    depth = len(realization.ffn_widths)
    if depth > config.depth:
        raise CraspError(f"--init-from compiled: the reference prediction program of "
                         f"{config.language} has depth {depth}, so --depth {config.depth} is too "
                         f"small for it (use --depth {depth} or more)")
    return realization


def adopt_architecture(config: TrainConfig) -> TrainConfig:
    """``config`` with the architecture of its ``init_from`` checkpoint."""
    if config.init_from == COMPILED:
        realization = _compiled(config)
        widths = realization.ffn_widths + [[1]] * (config.depth - len(realization.ffn_widths))
        return config.replace(d_model=len(realization.residual_labels), n_heads=1, norm="none",
                              posenc="nope", activation="relu",
                              d_ff=max(w for layer in widths for w in layer), ffn_widths=widths,
                              search=None)
    checkpoint = load_checkpoint(config.init_from)
    source = TrainConfig.from_dict(checkpoint.config["train_config"])
    if source.depth != config.depth:
        raise CraspError(f"--init-from {config.init_from}: the checkpoint has {source.depth} "
                         f"layers, the run asks for --depth {config.depth}")
    keep = ("d_model", "n_heads", "norm", "posenc", "activation", "d_ff", "rope_base",
            "rope_fraction", "alibi_slopes", "alibi_impl")
    return config.replace(**{name: getattr(source, name) for name in keep},
                          ffn_widths=checkpoint.module.ffn_widths, search=None)


def _initial_state(config: TrainConfig) -> tuple[dict[str, torch.Tensor], list[str]]:
    if config.init_from == COMPILED:
        realization = _compiled(config)
        return state_dict(realization), realization.vocab
    checkpoint = load_checkpoint(config.init_from)
    return checkpoint.module.state_dict(), list(checkpoint.config["vocab"])


def load_initial_weights(model: torch.nn.Module, config: TrainConfig, vocab) -> None:
    """Set ``model`` (built from ``adopt_architecture``'s config) to the checkpoint's weights,
    reordered into ``vocab``; parameters the checkpoint lacks (extra layers) become 0. Weights
    the model's dtype cannot hold exactly (a float64 realization with a large gain, trained in
    float32) are refused rather than rounded."""
    state, source_vocab = _initial_state(config)
    missing = [token for token in vocab if token not in source_vocab]
    if missing:
        raise CraspError(f"--init-from {config.init_from}: the checkpoint's vocabulary "
                         f"{source_vocab} lacks the language's token(s) {', '.join(missing)}")
    rows = [source_vocab.index(token) for token in vocab]
    rows += [len(source_vocab), len(source_vocab) + 1]  # BOS, padding
    state = {**state, "embed.weight": state["embed.weight"][rows]}
    target = {name: torch.zeros_like(value) for name, value in model.state_dict().items()}
    for name, value in state.items():
        if name not in target or target[name].shape != value.shape:
            raise CraspError(f"--init-from {config.init_from}: tensor {name!r} does not fit the "
                             f"model (a different architecture)")
        converted = value.to(target[name].dtype)
        if not torch.equal(converted.to(value.dtype), value):
            raise CraspError(f"--init-from {config.init_from}: tensor {name!r} is "
                             f"{str(value.dtype).removeprefix('torch.')} and the run trains in "
                             f"{str(converted.dtype).removeprefix('torch.')}, which would round "
                             f"its values; realize the program with --dtype float32 (or a "
                             f"smaller --max-length) to start from it")
        target[name] = converted
    model.load_state_dict(target)
