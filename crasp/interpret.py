"""Pass: Program x inputs -> Evaluation. A vectorized interpreter over positions and a batch.

Inputs are encoded as one flat integer array (``FlatBatch``): each input's BOS position, which a
transformer reads before the first token, then its tokens, one input after another. Every
definition is evaluated once for the whole batch as an array of that shape, so a count is one
``cumsum`` over the batch less each input's sum before its BOS, with no Python loop over
positions or strings, and no padding to compute on (half the work on inputs of mixed lengths).

The BOS position makes the empty input well defined, and equal to what a transformer that reads
only BOS computes: every token test is false there, no count includes BOS (so all counts are 0
at BOS), positional predicates see position -1, and the empty string's answer is the answer at
BOS. ``Evaluation.columns`` shows the values padded, as [B, T + 1] arrays with BOS in column 0
and 0 (False) past each input's end; ``EncodedBatch`` is the padded encoding, which the compiled
models read.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from crasp import syntax
from crasp.errors import InputError

BOS_ID = -1
PAD_ID = -2
_BOS = object()   # stands for BOS among the tokens of the dictionary lookup


@dataclass(frozen=True)
class FlatBatch:
    """Token ids [N]: each input's BOS (``BOS_ID``) then its tokens, one input after another
    (N = B + the number of tokens); lengths [B]."""

    ids: np.ndarray
    lengths: np.ndarray

    @cached_property
    def starts(self) -> np.ndarray:
        """[B]: where each input's BOS is."""
        return _starts(self.lengths)

    def padded(self, values: np.ndarray, fill=0) -> np.ndarray:
        """``values`` [N] as [B, T + 1], BOS in column 0 and ``fill`` past each input's end."""
        width = int(self.lengths.max(initial=0)) + 1
        out = np.full((len(self.lengths), width), fill, dtype=values.dtype)
        out[np.arange(width) <= self.lengths[:, None]] = values   # row-major: the flat order
        return out


@dataclass(frozen=True)
class EncodedBatch:
    """Token ids [B, T + 1] with BOS in column 0 and PAD after each string; lengths [B]."""

    ids: np.ndarray
    lengths: np.ndarray

    def flat(self) -> FlatBatch:
        width = self.ids.shape[1]
        return FlatBatch(self.ids[np.arange(width) <= self.lengths[:, None]], self.lengths)


class _TokenIds(dict):
    """Token -> id; a token outside the alphabet gets ``other`` (looked up in C: only such a
    token calls ``__missing__``), and something that is not a string is refused."""

    def __init__(self, alphabet: Sequence[str]):
        super().__init__({token: i for i, token in enumerate(alphabet)})
        self.other = len(alphabet)
        self[_BOS] = BOS_ID

    def __missing__(self, token) -> int:
        if not isinstance(token, str):
            raise InputError(f"inputs must be one string, a list of strings, or a list of token "
                             f"lists (lists of strings); this batch holds the token {token!r}")
        return self.other


def encode_flat(program: syntax.Program, inputs: Sequence[Sequence[str]],
                strict_alphabet: bool = False, first_number: int = 1) -> FlatBatch:
    """Map token strings to alphabet indices. A token outside the alphabet gets the id
    ``len(alphabet)``, which no token test matches (Hahn's meaning: every token test is false
    there); with ``strict_alphabet`` it is an ``InputError`` instead, naming the input by its
    number (``first_number`` for the first of ``inputs``: a stream is encoded batch by batch).

    No Python code runs per token: the ids come from ``_single_character_ids`` (every token
    one character, the common case) or from one dictionary lookup per token at C speed
    (``map``, BOS looked up as a token). Encoding was most of the interpreter's time."""
    index = _TokenIds(program.alphabet)
    lengths = np.fromiter(map(len, inputs), dtype=np.int64, count=len(inputs))
    size = len(inputs) + int(lengths.sum())
    ids = _single_character_ids(inputs, index, lengths)
    if ids is None:
        with_bos = itertools.chain.from_iterable(
            itertools.chain.from_iterable(zip(itertools.repeat((_BOS,)), inputs)))
        try:
            ids = np.fromiter(map(index.__getitem__, with_bos), dtype=_id_type(index.other),
                              count=size)
        except TypeError:   # an unhashable token (a list, say) cannot even be looked up
            raise InputError("inputs must be one string, a list of strings, or a list of token "
                             "lists (lists of strings); this batch holds something else") from None
    batch = FlatBatch(ids, lengths)
    if strict_alphabet and (ids == index.other).any():
        where = int(np.argmax(ids == index.other))
        row = int(np.searchsorted(batch.starts, where, side="right")) - 1
        position = where - int(batch.starts[row]) - 1
        raise InputError(
            f"input {first_number + row}: token {inputs[row][position]!r} at position "
            f"{position} is not in "
            f"the alphabet {{{', '.join(repr(t) for t in program.alphabet)}}}")
    return batch


def encode(program: syntax.Program, inputs: Sequence[Sequence[str]],
           strict_alphabet: bool = False, first_number: int = 1) -> EncodedBatch:
    """``encode_flat`` padded to [B, T + 1] int64 ids, PAD after each input."""
    batch = encode_flat(program, inputs, strict_alphabet, first_number)
    return EncodedBatch(batch.padded(batch.ids.astype(np.int64), PAD_ID), batch.lengths)


# The separator between tokens and the stand-in for BOS in ``_single_character_ids``.
_SEPARATOR, _BOS_CHARACTER = "\x00", "\x01"


def _single_character_ids(inputs: Sequence[Sequence[str]], index: _TokenIds,
                          lengths: np.ndarray) -> np.ndarray | None:
    """The flat ids when every token is a string of one character other than ``_SEPARATOR``
    and ``_BOS_CHARACTER``, else None: about 10 ns per token against 50 for a dictionary
    lookup each.

    Each input's tokens are joined with the separator between them (at C speed), and these
    strings, each after the BOS character and leaving out the empty ones, are joined the same
    way: ``text`` is every field, BOS or token, of the N = B + sum(lengths) positions joined
    with the separator. If every token is one such character, (a) ``text`` has 2N - 1
    characters, (b) the separator is at no even index, (c) the BOS character is at even index
    ``2 * start`` of each input and at no other even index. Conversely, given (a)-(c): the
    separator after a field of even length (the empty one included) would fall at an even
    index, so every field but the last has odd length and begins at an even index; the B BOS
    fields are then the B even indices that (c) names, in order, so input i's tokens fill the
    indices from ``2 * start[i] + 2`` to ``2 * start[i + 1] - 2`` (to the end of ``text``, by
    (a), for the last input): ``lengths[i]`` tokens with a separator after each but the last
    in ``2 * lengths[i] - 1`` characters, all but the last of odd length, so each is one
    character, which is neither the separator (b) nor the BOS character (c). The code points
    (Latin-1 or UTF-32 bytes) at the even indices then index a table from code point to id."""
    try:
        text = _SEPARATOR.join(filter(None, itertools.chain.from_iterable(
            zip(itertools.repeat(_BOS_CHARACTER), map(_SEPARATOR.join, inputs)))))
    except TypeError:   # a token that is not a string: the caller's lookup refuses it
        return None
    if len(text) != max(2 * (len(lengths) + int(lengths.sum())) - 1, 0):
        return None
    try:
        codes = np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
    except UnicodeEncodeError:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    del text
    positions = codes[::2]
    separator, bos = ord(_SEPARATOR), ord(_BOS_CHARACTER)
    starts = _starts(lengths)
    if (positions == separator).any() or np.count_nonzero(positions == bos) != len(inputs) or \
            not (positions[starts] == bos).all():
        return None
    table = np.full(int(positions.max(initial=bos)) + 1, index.other,
                    dtype=_id_type(index.other))
    for token, i in index.items():
        if type(token) is str and len(token) == 1 and ord(token) < len(table):
            table[ord(token)] = i
    table[bos] = BOS_ID
    return np.take(table, positions)


def _starts(lengths: np.ndarray) -> np.ndarray:
    """Where each input's BOS is in the flat batch: the positions of the inputs before it."""
    return np.cumsum(lengths + 1) - (lengths + 1)


def _id_type(other: int) -> type:
    """The narrowest integer type holding every id, from ``BOS_ID`` to ``other``: the token
    tests read fewer bytes."""
    return np.int8 if other <= 127 else np.int16 if other <= 32767 else np.int32


@dataclass(frozen=True)
class Evaluation:
    """The value of every definition at every position of every input.

    ``values[name]`` is flat, as the ``batch`` ids are; ``columns[name]`` has shape [B, T + 1]
    (column 0 = BOS, 0 or False past each input's end); ``trace[name]`` drops the BOS column so
    that index i is token i.
    """

    program: syntax.Program
    batch: FlatBatch
    values: dict[str, np.ndarray]

    @property
    def lengths(self) -> np.ndarray:
        return self.batch.lengths

    @cached_property
    def columns(self) -> Mapping[str, np.ndarray]:
        return _MadeOnUse(self.values, lambda name: self.batch.padded(self.values[name]))

    @property
    def mask(self) -> np.ndarray:
        """[B, T]: True at real token positions."""
        return np.arange(int(self.lengths.max(initial=0)))[None, :] < self.lengths[:, None]

    @cached_property
    def trace(self) -> Mapping[str, np.ndarray]:
        return _MadeOnUse(self.values, lambda name: self.columns[name][:, 1:])

    @property
    def output(self) -> np.ndarray:
        """[B, T] bool: the answer at every token position (False past each string's end)."""
        return self.batch.padded(self.values[self.program.answer.name])[:, 1:] & self.mask

    @property
    def accept(self) -> np.ndarray:
        """[B] bool: the answer at each string's last position (at BOS for the empty string)."""
        return self.answer_at_end.astype(bool)

    @property
    def answer_at_end(self) -> np.ndarray:
        """[B]: the answer's value at each string's last position (a count, for a program read
        with ``count_answer``)."""
        return self.values[self.program.answer.name][self.batch.starts + self.lengths]

    def values_of(self, row: int) -> dict[str, np.ndarray]:
        """Every definition's per-token values for one input."""
        start = int(self.batch.starts[row]) + 1
        end = start + int(self.lengths[row])
        return {name: values[start:end] for name, values in self.values.items()}


class _MadeOnUse(Mapping):
    """``make(name)`` for each of ``names``, made when first read and kept: a caller that reads
    one definition's padded values pays for that one only."""

    def __init__(self, names, make):
        self._names, self._make, self._made = names, make, {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._made:
            if name not in self._names:
                raise KeyError(name)
            self._made[name] = self._make(name)
        return self._made[name]

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


INT16_MAX = 2 ** 15 - 1
INT32_MAX = 2 ** 31 - 1
INT64_MAX = 2 ** 63 - 1


class _Evaluator:
    """Evaluates expressions (``apply``, folded over each definition by ``syntax.fold``:
    no recursion, so nesting of any depth works), keeping beside each integer value a bound on
    its magnitude at every position: ``|#P| <= T``, ``|c| = c``, ``|a + b| <= |a| + |b|``,
    ``|k * a| = |k| |a|``, and the maximum over the operands of min, max and if. A node's value
    is computed in the narrowest of int32, int64 and Python integers (numpy object arrays) that
    holds its bound (each operand's bound is at most its own, so nothing overflows), so every
    answer is exact at any length and for literals of any size. Counts are int16 while the
    longest input has at most 2^15 - 1 tokens (see ``count``): narrow types are less memory to
    write and read, which is most of the time of numpy's passes."""

    def __init__(self, batch: FlatBatch, alphabet: Sequence[str]):
        self.batch = batch
        self.ids = batch.ids
        self.length = int(batch.lengths.max(initial=0))
        self.env: dict[str, np.ndarray] = {}
        self.bounds: dict[str, int | None] = {}
        self.alphabet_index = {token: i for i, token in enumerate(alphabet)}

    @cached_property
    def position(self) -> np.ndarray:
        """[N]: each position's index in its input, -1 at BOS."""
        return np.arange(len(self.ids)) - np.repeat(self.batch.starts + 1, self.batch.lengths + 1)

    def full(self, values: np.ndarray) -> np.ndarray:
        """``values`` at every position (a constant is stored once, as a view)."""
        return values if values.shape == self.ids.shape else \
            np.broadcast_to(values, self.ids.shape)

    def apply(self, node: syntax.Expr, arguments: list[tuple[np.ndarray, int | None]]):
        kind = type(node)
        operands = [value for value, _ in arguments]
        bounds = [bound for _, bound in arguments]
        if kind is syntax.TokenTest:
            index = self.alphabet_index.get(node.token)
            if index is None:  # a literal outside a declared-later alphabet cannot occur
                return np.zeros(1, dtype=bool), None
            return self.ids == index, None
        if kind is syntax.BoolConst:
            return np.full(1, node.value, dtype=bool), None
        if kind is syntax.IntConst:
            return _integers(np.full(1, node.value, dtype=object), abs(node.value))
        if kind is syntax.PositionTest:
            return self.position % node.modulus == node.residue, None
        if kind is syntax.Ref:
            return self.env[node.name], self.bounds[node.name]
        if kind is syntax.Not:
            return ~operands[0], None
        if kind is syntax.And:
            return operands[0] & operands[1], None
        if kind is syntax.Or:
            return operands[0] | operands[1], None
        if kind is syntax.Compare:
            return _COMPARE[node.op](*operands), None
        if kind is syntax.Count:
            return self.count(node, operands[0])
        if kind is syntax.Conditional:
            bound = max(bounds[1:]) if bounds[1] is not None else None
            return _integers(np.where(*operands), bound) if bound is not None else \
                (np.where(*operands), None)
        if kind is syntax.Add:
            bound = bounds[0] + bounds[1]
            left, right = _wide(operands, bound)
            return _integers(left + right, bound)
        if kind is syntax.Sub:
            bound = bounds[0] + bounds[1]
            left, right = _wide(operands, bound)
            return _integers(left - right, bound)
        if kind is syntax.Scale:
            # The product's bound can be below its operand's (0 * c, a large c): the factors
            # are as wide as the largest of the two, the product is narrowed to its own.
            bound = abs(node.factor) * bounds[0]
            width = max(bound, bounds[0], abs(node.factor))
            factor, operand = _wide([np.asarray(node.factor), operands[0]], width)
            return _integers(factor * operand, bound)
        if kind is syntax.Min:
            return _integers(np.minimum(*operands), max(bounds))
        if kind is syntax.Max:
            return _integers(np.maximum(*operands), max(bounds))
        raise TypeError(f"not a C-RASP expression: {node!r}")

    def count(self, node: syntax.Count, body: np.ndarray) -> tuple[np.ndarray, int]:
        body = self.full(body)
        if node.relation is None:
            # One prefix sum over the batch, less its value at each input's BOS (the sum over
            # the inputs before and over BOS, which so never counts). Both are taken modulo
            # 2^16 when a count fits int16 (unsigned numpy integers wrap around): the
            # difference, in [0, T], is then exact, and the array a quarter of int64's.
            wrapping = self.length <= INT16_MAX
            counts = np.cumsum(body, dtype=np.uint16 if wrapping else _dtype(len(body)))
            counts -= np.repeat(counts[self.batch.starts], self.batch.lengths + 1)
            return (counts.view(np.int16) if wrapping else counts), self.length
        # #[j = i - c] P holds exactly one candidate j, so the count is P(i - c) as 0/1, where
        # i - c is a token of the same input (i >= c: never BOS).
        offset = node.relation.offset
        shifted = np.zeros(len(body), dtype=np.int32)
        shifted[offset:] = body[:max(len(body) - offset, 0)]
        shifted[self.position < offset] = 0
        return shifted, 1


def _dtype(bound: int) -> type:
    """The narrowest of int32, int64 and Python integers that holds every value in
    [-bound, bound]."""
    return np.int32 if bound <= INT32_MAX else np.int64 if bound <= INT64_MAX else object


def _wide(operands: list[np.ndarray], bound: int) -> list[np.ndarray]:
    """The operands in the integer type of ``bound``, so that their result cannot overflow."""
    return [operand.astype(_dtype(bound), copy=False) for operand in operands]


def _integers(value: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """An integer result in the narrowest integer type that holds ``bound``."""
    return value.astype(_dtype(bound), copy=False), bound


_COMPARE = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}


def evaluate_flat(program: syntax.Program, batch: FlatBatch) -> Evaluation:
    evaluator = _Evaluator(batch, program.alphabet)
    values: dict[str, np.ndarray] = {}
    for definition in program.definitions:
        value, bound = syntax.fold(definition.expr, evaluator.apply)
        value = evaluator.full(value)
        evaluator.env[definition.name] = value
        evaluator.bounds[definition.name] = bound
        values[definition.name] = value
    return Evaluation(program, batch, values)


def evaluate_encoded(program: syntax.Program, batch: EncodedBatch) -> Evaluation:
    return evaluate_flat(program, batch.flat())


def evaluate(program: syntax.Program, inputs: Sequence[Sequence[str]],
             strict_alphabet: bool = False, first_number: int = 1) -> Evaluation:
    """Evaluate ``program`` on a batch of token lists (see ``encode_flat`` for other tokens)."""
    return evaluate_flat(program, encode_flat(program, inputs, strict_alphabet, first_number))
