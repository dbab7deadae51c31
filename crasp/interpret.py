"""Pass: Program x inputs -> Evaluation. A vectorized interpreter over positions and a batch.

Inputs are encoded as one integer array of shape [B, T + 1]: column 0 is the BOS position, which
a transformer reads before the first token, and column i + 1 holds token i (0-based). Every
definition is evaluated once for the whole batch as an array of that shape, so a count is one
``cumsum`` along the position axis, with no Python loop over positions or strings.

The BOS column makes the empty input well defined, and equal to what a transformer that reads
only BOS computes: every token test is false there, no count includes BOS (so all counts are 0
at BOS), positional predicates see position -1, and the empty string's answer is the answer at
BOS. Padding columns (past a string's length) come after the string, so the causal prefix sums
never read them; their values are meaningless and masked out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from crasp import syntax
from crasp.errors import InputError

BOS_ID = -1
PAD_ID = -2


@dataclass(frozen=True)
class EncodedBatch:
    """Token ids [B, T + 1] with BOS in column 0 and PAD after each string; lengths [B]."""

    ids: np.ndarray
    lengths: np.ndarray


class _TokenIds(dict):
    """Token -> id; a token outside the alphabet gets the next id (looked up in C: only such a
    token calls ``__missing__``), and something that is not a string is refused."""

    def __missing__(self, token) -> int:
        if not isinstance(token, str):
            raise InputError(f"inputs must be one string, a list of strings, or a list of token "
                             f"lists (lists of strings); this batch holds the token {token!r}")
        return len(self)


def encode(program: syntax.Program, inputs: Sequence[Sequence[str]],
           strict_alphabet: bool = False, first_number: int = 1) -> EncodedBatch:
    """Map token strings to alphabet indices. A token outside the alphabet gets the id
    ``len(alphabet)``, which no token test matches (Hahn's meaning: every token test is false
    there); with ``strict_alphabet`` it is an ``InputError`` instead, naming the input by its
    number (``first_number`` for the first of ``inputs``: a stream is encoded batch by batch).

    All tokens are looked up in one pass at C speed (``map`` over the concatenated batch) and
    scattered into the padded array with a mask: no Python loop over the inputs, which was
    most of the interpreter's time."""
    index = _TokenIds({token: i for i, token in enumerate(program.alphabet)})
    other = len(program.alphabet)
    lengths = np.fromiter(map(len, inputs), dtype=np.int64, count=len(inputs))
    total = int(lengths.sum())
    try:
        flat = np.fromiter(map(index.__getitem__, itertools.chain.from_iterable(inputs)),
                           dtype=np.int64, count=total)
    except TypeError:   # an unhashable token (a list, say) cannot even be looked up
        raise InputError("inputs must be one string, a list of strings, or a list of token "
                         "lists (lists of strings); this batch holds something else") from None
    if strict_alphabet and total and (flat == other).any():
        where = int(np.argmax(flat == other))
        row = int(np.searchsorted(np.cumsum(lengths), where, side="right"))
        position = where - int(lengths[:row].sum())
        raise InputError(
            f"input {first_number + row}: token {inputs[row][position]!r} at position "
            f"{position} is not in "
            f"the alphabet {{{', '.join(repr(t) for t in program.alphabet)}}}")
    width = int(lengths.max(initial=0)) + 1
    ids = np.full((len(inputs), width), PAD_ID, dtype=np.int64)
    ids[:, 0] = BOS_ID
    ids[:, 1:][np.arange(width - 1) < lengths[:, None]] = flat   # row-major: the flat order
    return EncodedBatch(ids, lengths)


@dataclass(frozen=True)
class Evaluation:
    """The value of every definition at every position of every input.

    ``columns[name]`` has shape [B, T + 1] (column 0 = BOS); ``trace[name]`` drops the BOS
    column so that index i is token i.
    """

    program: syntax.Program
    lengths: np.ndarray
    columns: dict[str, np.ndarray]

    @property
    def mask(self) -> np.ndarray:
        """[B, T]: True at real token positions."""
        width = next(iter(self.columns.values())).shape[1] - 1
        return np.arange(width)[None, :] < self.lengths[:, None]

    @property
    def trace(self) -> dict[str, np.ndarray]:
        return {name: values[:, 1:] for name, values in self.columns.items()}

    @property
    def output(self) -> np.ndarray:
        """[B, T] bool: the answer at every token position (False past each string's end)."""
        return self.columns[self.program.answer.name][:, 1:] & self.mask

    @property
    def accept(self) -> np.ndarray:
        """[B] bool: the answer at each string's last position (at BOS for the empty string)."""
        return self.answer_at_end.astype(bool)

    @property
    def answer_at_end(self) -> np.ndarray:
        """[B]: the answer's value at each string's last position (a count, for a program read
        with ``count_answer``)."""
        answer = self.columns[self.program.answer.name]
        return answer[np.arange(len(self.lengths)), self.lengths]

    def values_of(self, row: int) -> dict[str, np.ndarray]:
        """Every definition's per-token values for one input."""
        length = int(self.lengths[row])
        return {name: values[row, 1:length + 1] for name, values in self.columns.items()}


INT64_MAX = 2 ** 63 - 1


class _Evaluator:
    """Evaluates expressions without recursion (an explicit stack, so nesting of any depth
    works), keeping beside each integer value a bound on its magnitude at every position:
    ``|#P| <= T``, ``|c| = c``, ``|a + b| <= |a| + |b|``, ``|k * a| = |k| |a|``, and the
    maximum over the operands of min, max and if. Where a node's bound fits int64, its value
    is computed in int64 (each operand's bound is at most its own, so nothing overflows);
    otherwise in Python integers (numpy object arrays), so every answer is exact at any
    length and for literals of any size."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        self.shape = ids.shape
        self.length = ids.shape[1] - 1
        self.is_token = ids >= 0
        self.position = np.arange(ids.shape[1]) - 1  # BOS is position -1
        self.env: dict[str, np.ndarray] = {}
        self.bounds: dict[str, int | None] = {}
        self.alphabet_index: dict[str, int] = {}

    def full(self, values) -> np.ndarray:
        return np.broadcast_to(values, self.shape)

    def eval(self, root: syntax.Expr) -> tuple[np.ndarray, int | None]:
        """The value of ``root`` (broadcastable to [B, T + 1], bool, int64 or object) and its
        magnitude bound (None for a Boolean)."""
        pending: list[tuple[syntax.Expr, bool]] = [(root, False)]
        values: list[tuple[np.ndarray, int | None]] = []
        while pending:
            node, expanded = pending.pop()
            operands = syntax.children(node)
            if operands and not expanded:
                pending.append((node, True))
                pending.extend((operand, False) for operand in reversed(operands))
                continue
            arguments = values[len(values) - len(operands):]
            del values[len(values) - len(operands):]
            values.append(self.apply(node, arguments))
        return values[0]

    def apply(self, node: syntax.Expr, arguments: list[tuple[np.ndarray, int | None]]):
        kind = type(node)
        operands = [value for value, _ in arguments]
        bounds = [bound for _, bound in arguments]
        if kind is syntax.TokenTest:
            index = self.alphabet_index.get(node.token)
            if index is None:  # a literal outside a declared-later alphabet cannot occur
                return np.zeros((1, 1), dtype=bool), None
            return self.ids == index, None
        if kind is syntax.BoolConst:
            return np.full((1, 1), node.value, dtype=bool), None
        if kind is syntax.IntConst:
            return _integers(np.full((1, 1), node.value, dtype=object), abs(node.value))
        if kind is syntax.PositionTest:
            return (self.position % node.modulus == node.residue)[None, :], None
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
        # BOS never counts; padding columns come after the string, so cumsum never reads them.
        body = self.full(body) & self.is_token
        if node.relation is None:
            return np.cumsum(body, axis=1, dtype=np.int64), self.length
        # #[j = i - c] P holds exactly one candidate j, so the count is P(i - c) as 0/1.
        offset = node.relation.offset
        shifted = np.zeros(self.shape, dtype=np.int64)
        if offset < self.shape[1]:
            shifted[:, offset:] = body[:, :self.shape[1] - offset]
        return shifted, 1


def _wide(operands: list[np.ndarray], bound: int) -> list[np.ndarray]:
    """The operands as Python integers when ``bound`` does not fit int64."""
    if bound <= INT64_MAX:
        return [operand.astype(np.int64, copy=False)
                for operand in operands]
    return [operand.astype(object, copy=False) for operand in operands]


def _integers(value: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """An integer result as int64 when its bound fits, else as Python integers."""
    return value.astype(np.int64 if bound <= INT64_MAX else object, copy=False), bound


_COMPARE = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}


def evaluate_encoded(program: syntax.Program, batch: EncodedBatch) -> Evaluation:
    evaluator = _Evaluator(batch.ids)
    evaluator.alphabet_index = {token: i for i, token in enumerate(program.alphabet)}
    columns: dict[str, np.ndarray] = {}
    for definition in program.definitions:
        value, bound = evaluator.eval(definition.expr)
        value = evaluator.full(value)
        evaluator.env[definition.name] = value
        evaluator.bounds[definition.name] = bound
        columns[definition.name] = value
    return Evaluation(program, batch.lengths, columns)


def evaluate(program: syntax.Program, inputs: Sequence[Sequence[str]],
             strict_alphabet: bool = False, first_number: int = 1) -> Evaluation:
    """Evaluate ``program`` on a batch of token lists (see ``encode`` for other tokens)."""
    return evaluate_encoded(program, encode(program, inputs, strict_alphabet, first_number))
