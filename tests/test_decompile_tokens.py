"""Every vocabulary token round-trips through ``crasp decompile``, or the model is refused.

Tokens are drawn from all printable and all whitespace characters (the double quote and the
backslash often). A token a literal can hold (non-empty, no double quote, no whitespace: token
literals have no escapes, docs/language.md) is written so that the text reads back with the
model's vocabulary as its alphabet and answers as the model does; any other token refuses the
model with one message naming it. ``--verify`` checks the text written, read back.
"""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp.cli import cli
from crasp.compiler import verify
from crasp.compiler.random_models import random_model
from crasp.decompile.decompiling import decompile_model
from crasp.errors import CraspError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
CHARACTERS = st.one_of(st.characters(categories=["L", "M", "N", "P", "S", "Zs"]),
                       st.sampled_from(WHITESPACE), st.sampled_from(['"', "\\", "/", "#"]))
VOCABULARIES = st.lists(st.text(CHARACTERS, min_size=1, max_size=4), min_size=1, max_size=3,
                        unique=True)


def writable(token: str) -> bool:
    """The language's rule for a token literal, stated independently of the implementation."""
    return '"' not in token and not any(c.isspace() for c in token)


def small_model(vocab: list[str], seed: int):
    return random_model(seed, tuple(vocab), max_layers=1, max_d_model=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VOCABULARIES, st.integers(0, 1000))
def test_every_token_round_trips_or_the_model_is_refused(vocab, seed):
    model = small_model(vocab, seed)
    unwritable = [token for token in vocab if not writable(token)]
    if unwritable:
        with pytest.raises(CraspError) as error:
            decompile_model(model)
        assert repr(unwritable[0]) in str(error.value)
        assert "a C-RASP token literal cannot hold it" in str(error.value)
        return
    result = decompile_model(model)
    read_back = crasp.parse_program(result.text)
    assert read_back.alphabet == tuple(vocab)
    assert crasp.format_program(read_back) == crasp.format_program(result.program)
    outcome = verify(read_back, max_exhaustive_length=3, n_random=4, max_random_length=30,
                     model=model)
    assert outcome.ok, outcome


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VOCABULARIES, st.integers(0, 1000))
def test_the_command_writes_what_it_verifies_or_refuses_with_one_message(tmp_path_factory,
                                                                        vocab, seed):
    place = tmp_path_factory.mktemp("decompile")
    small_model(vocab, seed).save(place / "m.model")
    output = place / "out.crasp"
    result = CliRunner().invoke(cli, ["decompile", str(place / "m.model"), "-o", str(output),
                                      "--verify", "--max-length", "3", "--random-count", "2"])
    if all(writable(token) for token in vocab):
        assert result.exit_code == 0, result.output
        assert "verified:" in result.output
        assert crasp.load_program(output).alphabet == tuple(vocab)
    else:
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: cannot decompile")
        assert "Traceback" not in result.output and not output.exists()


def test_examples_of_each_class():
    """A backslash is an ordinary character (literals have no escapes); a quote, a space, a
    tab and a newline are refused."""
    for token in ["\\", "a\\", "//", "#x", "\u00e9", "\x7f"]:
        result = decompile_model(small_model(["a", token], 3))
        assert crasp.parse_program(result.text).alphabet == ("a", token)
    for token in ['"', 'a"b', "a b", "\t", "a\nb", "\u2028"]:
        with pytest.raises(CraspError, match="a C-RASP token literal cannot hold it"):
            decompile_model(small_model(["a", token], 3))


def test_a_source_name_with_a_line_break_stays_in_the_header_comment():
    result = decompile_model(small_model(["a", "b"], 3), source="odd\nname.model")
    assert result.text.splitlines()[0].endswith("from 'odd\\nname.model': 1 layer.")
    assert crasp.parse_program(result.text).alphabet == ("a", "b")
