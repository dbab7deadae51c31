"""The one splitter of list options (``crasp.util.list_text``): an empty item is refused with
its place named, wherever it is and whichever option it is in; one trailing separator is not an
item. Property-tested against a plain reference, then every list option through the CLI."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.util.list_text import split_list

ITEM = st.text(alphabet="0123456789:@abc", min_size=0, max_size=4)


def reference_split(items: list[str]) -> list[str] | int:
    """The items joined by ',' should split back to themselves, except that one empty last item
    is a trailing separator; otherwise the 1-based place of the first empty item."""
    if len(items) > 1 and items[-1] == "":
        items = items[:-1]
    if items == [""]:
        return []
    for place, item in enumerate(items, 1):
        if item == "":
            return place
    return items


@settings(max_examples=400, deadline=None)
@given(st.lists(ITEM, min_size=1, max_size=6), st.sampled_from(["", " ", "  "]))
def test_split_matches_the_reference(items, padding):
    text = ",".join(padding + item + padding for item in items)
    expected = reference_split(items)
    if isinstance(expected, int):
        with pytest.raises(CraspError, match=rf"--opt: item {expected} of .* is empty"):
            split_list(text, "--opt")
    else:
        assert split_list(text, "--opt") == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.from_regex(r"[0-9]{1,3}(\.[0-9])?", fullmatch=True), min_size=1, max_size=5),
       st.lists(st.sampled_from([",", " ", ", ", " ,", "  ", " , "]), min_size=4, max_size=4))
def test_spaces_and_commas_both_separate_numbers(numbers, separators):
    text = "".join(number + separators[i % 4] for i, number in enumerate(numbers))
    assert split_list(text.rstrip(" "), "--moduli", spaces=True) == numbers


def test_brackets_keep_their_commas_and_plus_is_a_separator_too():
    assert split_list("[1, 2],(a,b), c", "--grid x") == ["[1, 2]", "(a,b)", "c"]
    assert split_list("251:300+301:350@skewed", "test_bins", separator="+") == [
        "251:300", "301:350@skewed"]
    with pytest.raises(CraspError, match="two '\\+' in a row"):
        split_list("251:300++301:350", "test_bins", separator="+")


# Every list option of the CLI, each with an empty item in the middle ({e}) and at the start
# ({s}); the commands refuse before any work (no output directory is made).
LIST_OPTIONS = [
    (["sweep", "--languages", "L3", "-o", "{out}", "--dry-run", "--depths"], "{s}1:2,{e}3",
     "--depths"),
    (["sweep", "--depths", "1", "-o", "{out}", "--dry-run", "--languages"], "{s}L3,{e}L4",
     "--languages"),
    (["sweep", "--depths", "1", "--languages", "L3", "-o", "{out}", "--dry-run", "--posenc"],
     "{s}nope,{e}rope", "--posenc"),
    (["sweep", "--depths", "1", "--languages", "L3", "-o", "{out}", "--dry-run", "--seeds"],
     "{s}0,{e}1", "--seeds"),
    (["sweep", "--depths", "1", "--languages", "L3", "-o", "{out}", "--dry-run", "--grid"],
     "lr={s}1e-3,{e}3e-4", "--grid lr"),
    (["generate", "L3", "--n", "1", "-o", "{out}", "--bins"], "{s}1:5,{e}6:8", "--bins"),
    (["train", "--print-config", "--test-bins"], "{s}1:5,{e}6:8", "--test-bins"),
    (["train", "--print-config", "--posenc", "alibi", "--alibi-slopes"], "{s}0.5,{e}0.25,0.1,0.1",
     "--alibi-slopes"),
    (["train", "--print-config", "--posenc", "sinusoidal-rational", "--moduli"], "{s}2,{e}3",
     "--moduli"),
    (["train", "--print-config", "--ffn-widths"], "{s}32,{e}32,16", "--ffn-widths"),
]


@pytest.mark.parametrize("words, value, option", LIST_OPTIONS,
                         ids=[case[2] for case in LIST_OPTIONS])
@pytest.mark.parametrize("where", ["middle", "start"])
def test_every_list_option_refuses_an_empty_item(tmp_path, words, value, option, where):
    out = tmp_path / "out"
    text = value.format(s="", e=",") if where == "middle" else value.format(s=",", e="")
    args = [word.format(out=out) for word in words] + [text]
    result = CliRunner().invoke(cli, args)
    place = 2 if where == "middle" else 1
    assert result.exit_code == 2, result.output
    assert f"{option}: item {place} of " in result.output and " is empty" in result.output
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize("words, value, option", LIST_OPTIONS,
                         ids=[case[2] for case in LIST_OPTIONS])
def test_every_list_option_takes_one_trailing_separator(tmp_path, words, value, option):
    out = tmp_path / "out"
    args = [word.format(out=out) for word in words] + [value.format(s="", e="") + ","]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
