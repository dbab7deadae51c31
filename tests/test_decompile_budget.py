"""``--max-states`` bounds the decompiler's work, counted in operations, never in seconds.

Two counters independent of the budget's own bookkeeping watch the expensive operations: the
rows the feed-forward tables are evaluated on (``finish_layer``) and the count terms of the
comparisons written (``_comparison``). Whatever the model and the budget, they stay within
it; the budget is exact (a decompilation that spends W units succeeds with W and is refused
with W - 1); a 300-token model whose program would be millions of terms is refused after at
most the budget's work, with one message.
"""

from __future__ import annotations

import contextlib
import re

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crasp.cli import cli
from crasp.compiler.executor import FixedPrecisionTransformer
from crasp.compiler.random_models import random_model
from crasp.decompile import write_program
from crasp.decompile.budget import EXACT_DIGITS, StateLimitError, count_text
from crasp.decompile.decompiling import decompile_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LARGE_VOCABULARY = tuple(f"t{i}" for i in range(300))


@contextlib.contextmanager
def operations():
    """Counts the rows evaluated by feed-forward tables and the count terms written."""
    counts = {"rows": 0, "terms": 0}
    finish_layer, comparison = FixedPrecisionTransformer.finish_layer, write_program._comparison

    def counted_finish_layer(self, h, heads, layer):
        counts["rows"] += h.reshape(-1, h.shape[-1]).shape[0]
        return finish_layer(self, h, heads, layer)

    def counted_comparison(terms, bound):
        counts["terms"] += len(terms)
        return comparison(terms, bound)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FixedPrecisionTransformer, "finish_layer", counted_finish_layer)
        patch.setattr(write_program, "_comparison", counted_comparison)
        yield counts


def _large_model():
    """One layer, 300 tokens, 301 embedding states: 63,721 candidates, and a program of about
    1.7 million count terms (76 s of writing before the budget counted them)."""
    return random_model(1, LARGE_VOCABULARY, max_layers=1, max_d_model=8, max_weight=3)


@pytest.mark.parametrize("budget", [1_000, 30_000, 70_000, 100_000])
def test_a_large_vocabulary_is_refused_within_the_budget(budget):
    with operations() as counts, pytest.raises(StateLimitError) as refused:
        decompile_model(_large_model(), max_states=budget)
    assert refused.value.spent <= budget == refused.value.limit
    layer_bos_rows = 1  # the executor's run on the empty input, one row per layer
    assert counts["rows"] + counts["terms"] <= budget + layer_bos_rows
    if budget > 63_721:  # the candidates fit: the program's terms are what is refused
        assert counts["rows"] > 63_721 and counts["terms"] > 0
        assert "count terms written" in str(refused.value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(1, 400))
def test_the_work_never_exceeds_the_budget_and_the_budget_is_exact(seed, layers, budget):
    model = random_model(seed, ("a", "b", "c"), max_layers=layers)
    with operations() as counts:
        try:
            result = decompile_model(model, max_states=budget)
        except StateLimitError as refused:
            assert refused.spent <= budget == refused.limit
            assert counts["rows"] + counts["terms"] <= budget + model.spec.n_layers
            return
    work = result.summary["work"]
    assert work <= budget
    assert counts["rows"] + counts["terms"] <= work + model.spec.n_layers
    assert decompile_model(model, max_states=work).text == result.text
    # The decompilation proper needs exactly ``needed`` units: one less is refused. The
    # readable pass spends the rest; where the budget stops it, the program as written is kept.
    written = decompile_model(model, max_states=budget, readable=False)
    needed = written.summary["work"]
    assert needed <= work
    if needed > 1:
        with pytest.raises(StateLimitError):
            decompile_model(model, max_states=needed - 1)
    if needed < work:
        bare = decompile_model(model, max_states=needed)
        assert bare.summary["readable"].startswith("kept as written: minimizing")
        assert bare.text == written.text and bare.summary["work"] == needed


def test_the_command_refuses_the_large_model_with_one_message(tmp_path):
    _large_model().save(tmp_path / "large.model")
    output = tmp_path / "large.crasp"
    result = CliRunner().invoke(cli, ["decompile", str(tmp_path / "large.model"), "-o",
                                      str(output), "--max-states", "70000"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: the model has too many states to decompile: ")
    assert "> --max-states 70,000" in result.output and "Traceback" not in result.output
    assert not output.exists()


@pytest.mark.parametrize("seed", range(8))
def test_an_alibi_window_is_charged_before_it_is_built(seed, monkeypatch):
    """A positive ALiBi slope makes a head's tables one per distance up to Delta, which a
    small slope makes long (random_model(5, alibi=True) would need 7.6 GB). Every window
    built fits in the budget: a window larger than the whole budget fails this test instead
    of being built (it would exhaust the machine's memory)."""
    from crasp.decompile import enumerate_states
    from crasp.decompile.budget import DEFAULT_MAX_STATES, PAIRS_PER_STATE

    real = enumerate_states.window_tables

    def guarded(arithmetic, scores, v, slope, size):
        entries = scores.numel() * (size + 1)
        assert entries <= DEFAULT_MAX_STATES * PAIRS_PER_STATE, "built past the budget"
        return real(arithmetic, scores, v, slope, size)

    monkeypatch.setattr(enumerate_states, "window_tables", guarded)
    try:
        result = decompile_model(random_model(seed, alibi=True))
    except StateLimitError as error:
        assert "--max-states 250,000" in str(error)
    else:
        assert result.summary["work"] <= DEFAULT_MAX_STATES


@settings(max_examples=300, deadline=None)
@given(count=st.integers(0, 10 ** 400))
def test_a_count_of_any_size_is_written_for_people(count):
    """Up to EXACT_DIGITS digits in full; beyond, its first three digits (cut, never rounded
    up) and the power of ten, so the text never claims more than the count."""
    text = count_text(count)
    digits = str(count)
    if len(digits) <= EXACT_DIGITS:
        assert text == f"{count:,}"
        return
    match = re.fullmatch(r"about (\d)\.(\d\d) x 10\^(\d+)", text)
    assert match, text
    leading, exponent = int(match[1] + match[2]), int(match[3])
    assert exponent == len(digits) - 1
    assert leading * 10 ** (exponent - 2) <= count < (leading + 1) * 10 ** (exponent - 2)


def test_a_wide_heads_astronomical_count_is_refused_in_a_few_lines():
    """A run read at many bits with a 32-wide head: layer 1's candidates are a product over 32
    coordinates (a 512-wide head of the paper grid's L6 run gave 307 digits, written three
    times). The refusal gives the leading digits and the power of ten instead."""
    import torch

    from crasp.decompile.enumerate_states import StateSource
    from crasp.train.config import TrainConfig
    from crasp.train.model import build_model
    from crasp.train.quantize import QuantizedRun

    torch.manual_seed(0)
    config = TrainConfig(language="L3", depth=1, d_model=32, n_heads=1, d_ff=8, posenc="nope")
    quantized = QuantizedRun(build_model(config, 2).to(torch.float64).eval(), 12, 6)
    source = StateSource(quantized, ("a", "b"), 2, None, 1, 1, 32, 12, 6,
                         tuple(f"h{i}" for i in range(32)))
    with pytest.raises(StateLimitError) as refused:
        decompile_model(source, "wide", 1_000)
    message = str(refused.value)
    match = re.search(r"layer 1 would enumerate about \d\.\d\d x 10\^(\d+) \(query state, "
                      r"head output\) pairs from its 2 query states, about ", message)
    assert match and int(match[1]) >= EXACT_DIGITS, message
    assert not re.search(r"\d{16}", message.replace(",", "")), message


@pytest.mark.parametrize("kind", ["nope", "periodic", "alibi", "wide vocabulary"])
@pytest.mark.parametrize("seed", range(12))
def test_the_first_layer_alone_is_charged_as_the_whole_decompilation_charges_it(kind, seed):
    """``charge_first_layer`` (extract's check before its precision choice) spends on layer
    1 exactly what ``enumerate_states`` spends on it, kind by kind, and is refused at the
    same limits: every model kind, random models."""
    from crasp.decompile.budget import Budget
    from crasp.decompile.enumerate_states import StateSource, charge_first_layer, \
        enumerate_states
    options = {"nope": {}, "periodic": {"moduli": (2, 3)}, "alibi": {"alibi": True},
               "wide vocabulary": {"vocab": tuple("abcdefg")}}[kind]
    model = random_model(seed, **options)
    whole, first = Budget(), Budget()
    refusals = []
    for run, budget in ((lambda: enumerate_states(model, whole)), whole), \
            ((lambda: charge_first_layer(StateSource.from_model(model), first)), first):
        try:
            run()
        except StateLimitError as error:
            refusals.append(str(error))
    layer_1 = {name: units for name, units in whole.spent_on.items()
               if name.startswith("layer 1:")}
    assert first.spent_on == layer_1 and first.spent == sum(layer_1.values())
    if len(refusals) == 2:   # refused in layer 1: the same refusal
        assert refusals[0] == refusals[1] and "layer 1" in refusals[1]
    for limit in first.spent, first.spent - 1:
        refused = Budget(limit)
        try:
            charge_first_layer(StateSource.from_model(model), refused)
        except StateLimitError as error:
            assert limit < first.spent and "layer 1" in str(error)
            assert error.refused is not None and error.refused[1] > 0
        else:
            assert limit == first.spent
