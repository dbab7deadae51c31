"""Named recipes. ``resolve_preset(name, **overrides)`` is the one way configs are built.

* ``default`` - a CPU-scale recipe, chosen by measurement on a 2-vCPU machine so that one
  (depth, language) cell costs a few minutes (see docs/train.md, "How the default preset was
  chosen").
* ``one-head`` - ``default`` with the paper's one attention head per layer (head dimension 64
  instead of 16): everything else, width included, is ``default``'s, so a sweep of both shows
  the effect of the head count alone (issue #16's side-by-side comparison).
* ``knee-deep`` - the recipe of Yang, Cadilhac & Chiang (NeurIPS 2025), without the official
  code's bugs: batch 1, post-LN, one head, feed-forward 2048, dropout 0.1 throughout, Adam
  (AdamW with weight decay 0), no schedule, no clipping, 25 epochs, train lengths 201-250,
  tests 251-300 / 301-350 / 351-400, and the search d_model 256/512 x lr 1e-4/1e-5 that stops at
  the first configuration reaching 100% validation exact match. Its full grid takes days on a
  CPU: use it for spot checks.
"""

from __future__ import annotations

import difflib
from typing import Any

from crasp.errors import CraspError
from crasp.train.config import SEARCHABLE, TrainConfig, config_fields

PRESETS: dict[str, dict[str, Any]] = {
    "default": dict(
        d_model=64, n_heads=4, d_ff=256, dropout=0.0, norm="pre", activation="relu",
        lr=1e-3, batch_size=32, epochs=20, warmup_steps=100, lr_schedule="constant",
        weight_decay=0.0, grad_clip=1.0, patience=6,
        train_bin=(201, 250), test_bins=[(251, 300), (301, 350), (351, 400)],
        n_train=2000, n_test=500, val_fraction=0.2, search=None,
    ),
    "knee-deep": dict(
        d_model=256, n_heads=1, d_ff=2048, dropout=0.1, norm="post", activation="relu",
        lr=1e-4, batch_size=1, epochs=25, warmup_steps=0, lr_schedule="constant",
        weight_decay=0.0, grad_clip=0.0, patience=0,
        train_bin=(201, 250), test_bins=[(251, 300), (301, 350), (351, 400)],
        n_train=1000, n_test=1000, val_fraction=0.2,
        search=[{"d_model": 256, "lr": 1e-4}, {"d_model": 256, "lr": 1e-5},
                {"d_model": 512, "lr": 1e-4}, {"d_model": 512, "lr": 1e-5}],
    ),
}


FIXED_PRECISION_CLASS = {"norm": "none", "dropout": 0.0}
"""What ``precision`` changes in a preset (``crasp.train.fixed_precision``)."""

PRESETS["one-head"] = {**PRESETS["default"], "n_heads": 1}


def preset_names() -> list[str]:
    return list(PRESETS)


def resolve_preset(name: str = "default", **overrides: Any) -> TrainConfig:
    """The config of preset ``name`` with keyword ``overrides`` of any ``TrainConfig`` field.

    An unknown preset or field, or an invalid value, raises ``CraspError``. A field set here
    that a preset's ``search`` varies (e.g. ``d_model`` for knee-deep) is pinned: it is removed
    from every search entry, and entries that become identical are tried once.
    """
    if name not in PRESETS:
        close = difflib.get_close_matches(name.lower(), list(PRESETS), n=1)
        raise CraspError(f"unknown preset {name!r}" + (f"; did you mean {close[0]!r}?" if close
                                                       else "")
                         + f" (choose from {', '.join(PRESETS)})")
    known = set(config_fields())
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise CraspError(f"unknown config field(s): {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(known))})")
    if "preset" in overrides and overrides["preset"] != name:
        raise CraspError(f"preset={overrides['preset']!r} contradicts the preset {name!r}")
    values = {**PRESETS[name], **overrides, "preset": name}
    if overrides.get("precision") is not None:
        # the model format's class has no normalization and no dropout: a preset's values
        # give way (an explicit --norm or --dropout is kept, and refused by validate)
        values.update({key: value for key, value in FIXED_PRECISION_CLASS.items()
                       if key not in overrides})
    search = values.get("search")
    if search and "search" not in overrides:
        pinned = set(overrides)
        entries: list[dict[str, Any]] = []
        for entry in search:
            kept = {k: v for k, v in entry.items() if k not in pinned}
            if kept not in entries:
                entries.append(kept)
        entries = [e for e in entries if e]
        values["search"] = entries if len(entries) > 1 else None
        if len(entries) == 1:
            values.update(entries[0])
    search = values.get("search")
    if (isinstance(search, list) and search and isinstance(search[0], dict)
            and set(search[0]) <= SEARCHABLE):
        values.update(search[0])  # the config's own fields show the first trial (a malformed
        #                           search is left to ``validate``, which says what it needs)
    config = TrainConfig(**values).normalized()
    return config.validate()
