"""Every .safetensors file crasp writes depends only on its tensors and metadata: the library
orders a file's metadata afresh for every save (``crasp.util.safetensors_bytes``)."""

from __future__ import annotations

import struct

import numpy as np
import safetensors.numpy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open

import crasp
from crasp.compiler import compile_program
from crasp.util.safetensors_bytes import stable

SAVES = 20
"""Saves per check: the library's order of two metadata keys is drawn per save, so twenty saves
of the old code agree only with probability 2^-19."""

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(metadata=st.dictionaries(texts, texts, max_size=5),
       shapes=st.lists(st.lists(st.integers(0, 3), max_size=3), min_size=1, max_size=4))
def test_stable_keeps_every_tensor_and_value_and_fixes_the_bytes(metadata, shapes,
                                                                 tmp_path_factory):
    rng = np.random.default_rng(len(shapes))
    tensors = {f"t{index}": rng.standard_normal(shape).astype(np.float32)
               for index, shape in enumerate(shapes)}
    saved = [stable(safetensors.numpy.save(tensors, metadata=metadata or None))
             for _ in range(4)]
    assert len(set(saved)) == 1
    assert stable(saved[0]) == saved[0]
    assert struct.unpack("<Q", saved[0][:8])[0] % 8 == 0   # the library's header alignment
    loaded = safetensors.numpy.load(saved[0])
    assert loaded.keys() == tensors.keys()
    assert all(np.array_equal(loaded[name], tensors[name]) for name in tensors)
    path = tmp_path_factory.mktemp("stable") / "t.safetensors"
    path.write_bytes(saved[0])
    with safe_open(str(path), "np") as opened:
        assert (opened.metadata() or {}) == metadata


def test_a_compiled_model_saved_again_has_the_same_bytes(tmp_path):
    model = compile_program(crasp.load_program(crasp.example("dyck1")))
    files = set()
    for index in range(SAVES):
        model.save(tmp_path / f"m{index}")
        files.add((tmp_path / f"m{index}" / "model.safetensors").read_bytes())
    assert len(files) == 1


def test_a_runs_checkpoint_saved_again_has_the_same_bytes(tmp_path):
    from crasp.train import run as files

    module = torch.nn.Linear(3, 2)
    written = set()
    for index in range(SAVES):
        files.save_weights(tmp_path / f"w{index}.safetensors", module,
                           {"epoch": 3, "val_exact_match": 0.5, "trial": 0})
        written.add((tmp_path / f"w{index}.safetensors").read_bytes())
    assert len(written) == 1
