"""Float loads never lose precision (issue 30): every documented snippet that builds a PyTorch
module from a float realization, run on a float64 realization certified at its largest length,
keeps float64 and answers as the interpreter at every position; loading float64 weights into a
float32 module is refused with one message instead of rounding them."""

import re
from pathlib import Path

import pytest
import torch

import crasp
from crasp.realize import realize_float
from crasp.errors import CraspError
from crasp.realize.checkpoint import architecture_config, state_dict
from crasp.train.checkpoint import load_checkpoint
from crasp.train.config import TrainConfig
from crasp.train.model import CausalTransformer
from parity import assert_parity, strings_for

DOCS = Path(__file__).resolve().parent.parent / "docs"
PROGRAM = "dyck2_bounded"  # rounded to float32 it answers wrongly at length 6 (issue 30)


def module_snippets() -> list[tuple[str, str]]:
    """(where, code) of every Python block in docs/ that builds a module from a float
    realization."""
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for number, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(),
                                                  re.S)):
            if "compile_float(" in block and ("CausalTransformer(" in block
                                              or "load_checkpoint(" in block):
                found.append((f"{page.name} block {number}", block))
    return found


def test_the_docs_have_module_snippets():
    assert module_snippets(), "no documented snippet builds a module from a float realization"


def largest_float64_length() -> int:
    program = crasp.load_program(crasp.example(PROGRAM))
    return realize_float(program, 1, "float64").largest_certifiable


@pytest.mark.parametrize("where,code", module_snippets())
def test_documented_snippet_keeps_float64_and_its_certificate(where, code, tmp_path,
                                                              monkeypatch, one_torch_thread):
    monkeypatch.chdir(tmp_path)
    largest = largest_float64_length()
    code, calls = re.subn(r"compile_float\((.*?), (\d+), \"float32\"\)",
                          lambda m: f'compile_float({m.group(1)}, {largest}, "float64", '
                                    f'measure_beyond=False)', code)
    assert calls == 1, f"{where}: expected one compile_float(..., N, \"float32\") call"
    code = re.sub(r"examples/\w+\.crasp", str(crasp.example(PROGRAM)), code)
    namespace: dict = {}
    exec(compile(code, where, "exec"), namespace)
    model = namespace["model"]
    assert {p.dtype for p in model.parameters()} == {torch.float64}
    program = crasp.load_program(crasp.example(PROGRAM))
    vocab = list(program.alphabet)

    def scorer(ids):
        with torch.no_grad():
            return model(torch.as_tensor(ids)).numpy()
    assert_parity(program, vocab, scorer, strings_for(vocab, up_to=8, random_length=200))


def test_float64_weights_into_a_float32_module_are_refused():
    program = crasp.load_program(crasp.example(PROGRAM))
    realization = realize_float(program, largest_float64_length(), "float64")
    module = CausalTransformer(architecture_config(realization, PROGRAM), len(realization.vocab),
                               1, realization.ffn_widths)
    weights = {k: v.to(torch.float64) for k, v in state_dict(realization).items()}
    with pytest.raises(CraspError, match="is float64 but the module is float32: loading would "
                                         "round the weights"):
        module.load_state_dict(weights)
    module.to(torch.float64).load_state_dict(weights)  # the documented order loads
    module.to(torch.float32).load_state_dict({k: v.float() for k, v in weights.items()})


def test_load_checkpoint_keeps_the_dtype(tmp_path):
    from crasp.realize.measure import compile_float
    program = crasp.load_program(crasp.example(PROGRAM))
    compile_float(program, str(tmp_path / "m"), largest_float64_length(), "float64",
                  measure_beyond=False)
    assert {p.dtype for p in load_checkpoint(tmp_path / "m").module.parameters()} == {
        torch.float64}


def test_training_from_a_float64_realization_refuses_to_round_it(tmp_path):
    """``crasp train --init-from`` trains in float32: a float64 realization whose weights
    float32 holds exactly starts as is, one it would round is refused with one message."""
    from crasp.realize.measure import compile_float
    from crasp.train.init import adopt_architecture, load_initial_weights
    from crasp.train.model import build_model

    program = crasp.load_program(crasp.example("dyck1"))
    for length, refused in ((100, False), (largest_float64_length(), True)):
        place = tmp_path / f"d1-{length}"
        compile_float(program, str(place), length, "float64", measure_beyond=False)
        config = adopt_architecture(TrainConfig(language="dyck1", depth=2,
                                                init_from=str(place)).validate())
        model = build_model(config, 2)
        if refused:
            with pytest.raises(CraspError, match="is float64 and the run trains in float32, "
                                                 "which would round its values"):
                load_initial_weights(model, config, ["(", ")"])
        else:
            load_initial_weights(model, config, ["(", ")"])
            source = load_checkpoint(place).module.state_dict()
            assert all(torch.equal(value.double(), source[name].double())
                       for name, value in model.state_dict().items() if name in source
                       and name != "embed.weight")
