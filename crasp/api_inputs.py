"""Inputs given from Python, made into the batch of token lists every pass works on.

The Python API reads inputs the way the command line reads its arguments, with the CLI's own
tokenizer (``crasp.util.inputs.tokenize``):

* a ``str`` is ONE input, tokenized exactly as ``crasp run PROGRAM ARG`` tokenizes ``ARG``
  (``"(())"`` is four tokens when every symbol is one character; ``"( ( ) )"`` likewise);
* a list of ``str`` is a batch of such inputs;
* a list of token lists (lists or tuples of ``str``) is a batch of token lists, taken as is.
"""

from __future__ import annotations

from typing import Sequence, Union

from crasp.errors import InputError
from crasp.util.inputs import tokenize

Inputs = Union[str, Sequence[str], Sequence[Sequence[str]]]
"""One input string, a batch of input strings, or a batch of token lists."""


def token_batch(inputs: Inputs, alphabet: Sequence[str]) -> list[list[str]]:
    """The batch of token lists that ``inputs`` stands for, over ``alphabet``.

    >>> token_batch("(())", ["(", ")"])
    [['(', '(', ')', ')']]
    >>> token_batch(["ab", "b a"], ["a", "b"])
    [['a', 'b'], ['b', 'a']]
    >>> token_batch([["if", "x"]], ["if", "x"])
    [['if', 'x']]
    """
    if isinstance(inputs, str):
        return [tokenize(inputs, alphabet)]
    batch = list(inputs)
    if all(isinstance(item, str) for item in batch):
        return [tokenize(item, alphabet) for item in batch]
    # token lists are taken as they are; the encoder refuses a token that is not a string
    # (``crasp.interpret.encode_flat``), so no Python test runs per token here
    kinds = set(map(type, batch))   # at C speed: a batch may hold millions of inputs
    if kinds <= {list}:
        return batch
    if kinds <= {list, tuple}:
        return [item if type(item) is list else list(item) for item in batch]
    raise InputError("inputs must be one string, a list of strings, or a list of token lists "
                     "(lists of strings); this batch mixes them or holds something else")


def check_lengths(model, inputs: Sequence[Sequence], first_number: int = 1) -> None:
    """Raise ``InputError`` naming the first input (numbered from ``first_number``) longer
    than ``model`` reads: a checkpoint with a learned positional table (``max_tokens``) has no
    row for a later position. Other models (``max_tokens`` absent or None) read any length."""
    limit = getattr(model, "max_tokens", None)
    if limit is None:
        return
    for number, tokens in enumerate(inputs, start=first_number):
        if len(tokens) > limit:
            raise InputError(f"input {number} has {len(tokens):,} tokens, more than the "
                             f"{limit:,} the model reads: its learned positional table has rows "
                             f"for BOS and {limit:,} tokens only")
