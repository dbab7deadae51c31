"""Pass: Program x alphabet -> a smaller program with the same answer at every position of every
string over the alphabet (before the searches of ``crasp.verify``).

Why. A decompiled program (``crasp decompile``) states every comparison its transformer makes,
however often it makes the same one: the trained L4 run of docs/extraction.md has 1,298
definitions and 26,441 count nodes, its 50 first-layer comparisons such as ``(117 *
#L0_state0) + 157 * #"b" == 0`` all mean ``#"b" == 0`` or its negation (``L0_state0 = !("a"
|| "b")`` holds at no token of {a, b}), and it comes down to 7 definitions over 2 counts.
Every search pays for each definition and count node at every position: the solver's terms,
the interpreter's columns, and the relation search's columns (``crasp.verify.relations``: one
per count node).

Derivation. Three rewrites, each keeping the value of every kept definition at every position
(BOS included) of every string over ``alphabet``, the only strings the verifier considers (by
default the programs' tokens plus a foreign token standing for all others), so every question
keeps its answer:

1. *Bodies read at tokens.* A count's body is read only at token positions (BOS never counts,
   and a guarded count reads 0 before the string), where exactly one token of the alphabet
   holds. So inside a count's body (at any depth) a subexpression that depends on the token
   alone (no count, no positional predicate, names of such definitions only) is the test "the
   token is one of S", for S the tokens of the alphabet where it holds (evaluated once per
   token): it is replaced by that disjunction of token tests, or by ``false``/``true``. A
   count whose body becomes ``false`` is the constant 0. Outside count bodies nothing is
   replaced: ``!("a" || "b")`` holds at BOS.
2. *Equal meanings merged.* In program order, each definition, with every name replaced by
   its representative, is put in ``crasp.canonical``'s form, with names as atoms except the
   small definitions that read no inlined name (``INLINED_SIZE``), which are inlined (so each
   form is at most a constant factor larger than its own definition). A definition whose type
   and form an earlier kept one has is that one's name from then on; one whose form is a
   constant is that constant (equal forms mean equal values at every position, and by
   induction on the order so do the names replaced). A count node is shared by every
   expression with a count of the same form (one object: the encoder steps it once, and the
   relation search sees one column). Boolean connectives with a constant operand are folded.
3. *Unread definitions dropped.* Only the answer and what it reads, directly or through other
   definitions, are kept; the answer stays last under its own name.

Cost: every node made is interned (one object per structure) and put in its form once
(``canonical.Forms`` caches forms by node), and every token-only node is evaluated at the
tokens its operands mention and once for all the others (``PerToken``): linear in the
program's size when each node mentions few tokens, never more than its size times the
alphabet's; a token set that holds at most tokens is written as the disjunction of all of
them, so the output can be that large (a truth table has at most
2^``canonical.MAX_TABLE_ATOMS`` rows; a definition nested deeper than ``canonical.MAX_NESTING``
gets no form and is kept as it is). benchmarks/bench_verify_large.py measures it.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator

from crasp import canonical, syntax
from crasp.verify.questions import Question

INLINED_SIZE = 16
"""A kept definition of at most this many nodes that reads no inlined name is inlined where
the forms of later ones are built (so that ``#"b" >= 1`` and ``#"b" == 0`` under two names are
seen to be complementary); any other stays an atom of their forms (inlining one that reads an
inlined name could double at each step of a chain)."""
_BOOLEAN_CONNECTIVES = (syntax.Not, syntax.And, syntax.Or)
_TOKEN_OPERATIONS = {
    syntax.Not: lambda node, a: not a,
    syntax.And: lambda node, a, b: a and b,
    syntax.Or: lambda node, a, b: a or b,
    syntax.Add: lambda node, a, b: a + b,
    syntax.Sub: lambda node, a, b: a - b,
    syntax.Scale: lambda node, a: node.factor * a,
    syntax.Min: lambda node, a, b: min(a, b),
    syntax.Max: lambda node, a, b: max(a, b),
    syntax.Conditional: lambda node, c, a, b: a if c else b,
    syntax.Compare: lambda node, a, b: _COMPARE[node.op](a, b),
}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}


def shrink_question(question: Question, alphabet: tuple[str, ...]) -> Question:
    """``question`` about the shrunk programs (same answers on every string over
    ``alphabet``)."""
    domain = question.domain
    return dataclasses.replace(question, programs=tuple(shrink(program, alphabet)
                                                        for program in question.programs),
                               domain=shrink(domain, alphabet) if domain is not None else None)


def shrink(program: syntax.Program, alphabet: tuple[str, ...]) -> syntax.Program:
    """``program`` with the three rewrites of the module's docstring applied."""
    return _Shrinker(alphabet).run(program)


@dataclasses.dataclass(frozen=True)
class PerToken:
    """A token-only node's value at each token of the alphabet (by index): ``default`` at
    every token but the ``exceptions``. The tokens a node does not mention all take the same
    value, so a node costs the tokens it mentions, not the alphabet (a tuple per node cost
    definitions x alphabet: 105 s for a program of 20,000 token tests over 20,000 tokens)."""
    default: object
    exceptions: dict[int, object]

    def at(self, token: int) -> object:
        return self.exceptions.get(token, self.default)


class _Shrinker:
    def __init__(self, alphabet: tuple[str, ...]):
        self.alphabet = alphabet
        self.replacement: dict[str, syntax.Expr] = {}     # name -> its representative or constant
        self.index = {token: i for i, token in enumerate(alphabet)}
        self.token_values: dict[str, PerToken] = {}       # token-only name -> value per token
        self.kept: dict[tuple, str] = {}                  # (type, form) -> kept name
        self.counts: dict[object, syntax.Expr] = {}       # a count's form -> its shared node
        self.small: dict[str, syntax.Expr] = {}           # kept name -> expr, inlined in forms
        # every node made is interned, so a subexpression that recurs anywhere in the program
        # is put in its form once (forms are cached by node identity; interned nodes live on)
        self.interned: dict[object, syntax.Expr] = {}
        self.counted: dict[int, syntax.Expr] = {}         # interned count -> what it becomes
        self.forms = canonical.Forms(self.small, inlined_names=None)

    def run(self, program: syntax.Program) -> syntax.Program:
        rewritten: list[syntax.Definition] = []
        for definition in program.definitions[:-1]:
            expr, values = self.rewrite(definition.expr)
            if values is not None:
                self.token_values[definition.name] = values
            representative = self.merge(definition, expr)
            if representative is None:
                rewritten.append(dataclasses.replace(definition, expr=expr))
            else:
                self.replacement[definition.name] = representative
        answer = program.answer
        rewritten.append(dataclasses.replace(answer, expr=self.rewrite(answer.expr)[0]))
        # a body's token set may name a token of the alphabet the program does not mention
        tokens = tuple(dict.fromkeys(program.alphabet + self.alphabet))
        return dataclasses.replace(program, definitions=_read_by_answer(rewritten),
                                   alphabet=tokens, declared_alphabet=True)

    def merge(self, definition: syntax.Definition, expr: syntax.Expr) -> syntax.Expr | None:
        """What the definition's name stands for from now on, or None to keep it."""
        if isinstance(expr, (syntax.Ref, syntax.BoolConst, syntax.IntConst)):
            return expr
        form = self.forms.of(expr)
        if form is None:
            return None
        constant = canonical.constant_of(form)
        if constant is not None:
            return self.intern(syntax.BoolConst(constant) if definition.type == syntax.BOOL
                               else syntax.IntConst(constant))
        key = (definition.type, form)
        if key in self.kept:
            return self.intern(syntax.Ref(self.kept[key]))
        self.kept[key] = definition.name
        if _is_small(expr) and not any(isinstance(node, syntax.Ref) and node.name in self.small
                                       for node in syntax.walk(expr)):
            self.small[definition.name] = expr
        else:   # a later definition that is this name under connectives (!!d, d && true)
            itself = syntax.Ref(definition.name)
            read = syntax.Not(syntax.Not(itself)) if definition.type == syntax.BOOL else itself
            self.kept.setdefault((definition.type, canonical.form_or_none(read)), definition.name)
        return None

    def rewrite(self, expr: syntax.Expr) -> tuple[syntax.Expr, PerToken | None]:
        """``expr`` with names replaced and count bodies reduced (rewrites 1 and 2), and its
        value at each token of the alphabet when it depends on the token alone (else None).

        One pass, children first, computing for each node its rewriting outside a count body,
        its rewriting inside one (where a token-only node becomes its token set), and its
        values per token."""
        def combine(node: syntax.Expr, parts: list[tuple]) -> tuple:
            kind = type(node)
            if kind is syntax.Ref:
                stands = self.intern(self.replacement.get(node.name, node))
                values = self.token_values.get(node.name)
                return stands, self.inside(stands, values), values
            if kind is syntax.Count:
                (_, inside, _), = parts
                count = self.count(self.intern(syntax.Count(inside, node.relation)))
                return count, count, None
            values = self.values_per_token(node, [values for _, _, values in parts])
            outside = self.intern(_folded(syntax.with_children(node, [p[0] for p in parts])))
            if values is not None:
                return outside, self.inside(outside, values), values
            inside = self.intern(_folded(syntax.with_children(node, [p[1] for p in parts])))
            return outside, inside, values

        outside, _, values = syntax.fold(expr, combine)
        return outside, values

    def values_per_token(self, node: syntax.Expr, parts: list[PerToken | None]
                         ) -> PerToken | None:
        """The node's value at each token of the alphabet, if it depends on the token alone."""
        kind = type(node)
        if kind is syntax.TokenTest:
            index = self.index.get(node.token)
            return PerToken(False, {} if index is None else {index: True})
        if kind in (syntax.BoolConst, syntax.IntConst):
            return PerToken(node.value, {})
        if kind not in _TOKEN_OPERATIONS or any(part is None for part in parts):
            return None   # a positional predicate, or a count below
        operation = _TOKEN_OPERATIONS[kind]
        default = operation(node, *(part.default for part in parts))
        tokens = set().union(*(part.exceptions for part in parts))
        exceptions = {token: value for token in tokens
                      if (value := operation(node, *(part.at(token) for part in parts)))
                      != default}
        return PerToken(default, exceptions)

    def inside(self, node: syntax.Expr, values: PerToken | None) -> syntax.Expr:
        """``node`` as read inside a count's body: a token-only Boolean is its token set."""
        if values is None or not isinstance(values.default, bool):
            return node
        return self.intern(self.tokens_where(values))

    def tokens_where(self, values: PerToken) -> syntax.Expr:
        """The test "the token is one of those where ``values`` holds" (at a token position)."""
        holding = (range(len(self.alphabet)) if values.default else sorted(values.exceptions))
        tokens = [syntax.TokenTest(self.alphabet[i]) for i in holding if values.at(i)]
        if len(tokens) in (0, len(self.alphabet)):
            return syntax.BoolConst(bool(tokens))
        test = tokens[0]
        for token in tokens[1:]:
            test = syntax.Or(test, token)
        return test

    def count(self, node: syntax.Count) -> syntax.Expr:
        """The shared node for a count of this form (0 for a count of a body never true)."""
        if id(node) not in self.counted:
            form = self.forms.of(node)
            constant = None if form is None else canonical.constant_of(form)
            if constant is not None:
                self.counted[id(node)] = self.intern(syntax.IntConst(constant))
            else:
                self.counted[id(node)] = node if form is None \
                    else self.counts.setdefault(form, node)
        return self.counted[id(node)]

    def intern(self, node: syntax.Expr) -> syntax.Expr:
        """The one node of this structure (its children are interned already)."""
        return self.interned.setdefault(syntax.interning_key(node), node)


def _folded(node: syntax.Expr) -> syntax.Expr:
    """A Boolean connective or a conditional with a constant operand, folded."""
    if not isinstance(node, (*_BOOLEAN_CONNECTIVES, syntax.Conditional)):
        return node
    constants = [isinstance(kid, syntax.BoolConst) for kid in syntax.children(node)]
    if not any(constants):
        return node
    if isinstance(node, syntax.Not):
        return syntax.BoolConst(not node.operand.value)
    if isinstance(node, syntax.Conditional):
        return (node.if_true if node.condition.value else node.if_false) if constants[0] \
            else node
    absorbing = isinstance(node, syntax.Or)   # true absorbs an or, false an and
    for constant, kid, other in ((constants[0], node.left, node.right),
                                 (constants[1], node.right, node.left)):
        if constant:
            return kid if kid.value == absorbing else other
    return node


def _is_small(expr: syntax.Expr) -> bool:
    return sum(1 for _ in itertools.islice(syntax.walk(expr), INLINED_SIZE + 1)) <= INLINED_SIZE


def _read_by_answer(definitions: list[syntax.Definition]) -> tuple[syntax.Definition, ...]:
    """The answer (last) and the definitions it reads, directly or through others, in order."""
    read = {definitions[-1].name}
    for definition in reversed(definitions):
        if definition.name in read:
            read.update(node.name for node in syntax.walk(definition.expr)
                        if isinstance(node, syntax.Ref))
    return tuple(definition for definition in definitions if definition.name in read)
