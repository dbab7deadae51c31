"""Hypothesis strategies: random well-typed C-RASP programs, built as ASTs and printed as text.

``program_asts`` draws a list of definitions whose expressions respect the type rules and a
depth bound (each count lowers the remaining budget by one); ``programs`` prints them with the
canonical printer, so every drawn text is a valid program. Shrinking goes towards fewer and
smaller definitions.
"""

from __future__ import annotations

from hypothesis import strategies as st

from crasp import syntax
from crasp.fmt import format_program

COMPARISONS = syntax.COMPARISON_OPERATORS


@st.composite
def _expr(draw, type_: str, depth: int, env: dict[str, tuple[str, int]], alphabet, size: int,
          positional: bool):
    """An expression of ``type_`` whose depth is at most ``depth``."""
    names = [n for n, (t, d) in env.items() if t == type_ and d <= depth]
    sub = lambda t, d=depth: _expr(t, d, env, alphabet, size - 1, positional)  # noqa: E731
    if type_ == syntax.BOOL:
        leaves = ["token", "const"] + (["ref"] if names else []) + (["pos"] if positional else [])
        inner = ["not", "and", "or", "compare", "compare", "cond"]
        kind = draw(st.sampled_from(leaves if size <= 0 else leaves + inner * 2))
        if kind == "token":
            return syntax.TokenTest(draw(st.sampled_from(alphabet)))
        if kind == "const":
            return syntax.BoolConst(draw(st.booleans()))
        if kind == "ref":
            return syntax.Ref(draw(st.sampled_from(names)))
        if kind == "pos":
            modulus = draw(st.integers(1, 3))
            return syntax.PositionTest("mod", modulus, draw(st.integers(0, modulus - 1)))
        if kind == "not":
            return syntax.Not(draw(sub(syntax.BOOL)))
        if kind in ("and", "or"):
            node = syntax.And if kind == "and" else syntax.Or
            return node(draw(sub(syntax.BOOL)), draw(sub(syntax.BOOL)))
        if kind == "compare":
            return syntax.Compare(draw(st.sampled_from(COMPARISONS)), draw(sub(syntax.COUNT)),
                                  draw(sub(syntax.COUNT)))
        return syntax.Conditional(draw(sub(syntax.BOOL)), draw(sub(syntax.BOOL)),
                                  draw(sub(syntax.BOOL)))
    leaves = ["int"] + (["ref"] if names else []) + (["count"] if depth >= 1 else [])
    inner = ["count", "count", "add", "sub", "scale", "min", "max", "cond"]
    if depth < 1:
        inner = [k for k in inner if k != "count"]
    kind = draw(st.sampled_from(leaves if size <= 0 else leaves + inner))
    if kind == "int":
        return syntax.IntConst(draw(st.integers(-3, 3)))
    if kind == "ref":
        return syntax.Ref(draw(st.sampled_from(names)))
    if kind == "count":
        relation = None
        if positional and draw(st.booleans()):
            offset = draw(st.integers(0, 3))
            relation = syntax.LocalRelation("offset", offset, (offset,))
        return syntax.Count(draw(_expr(syntax.BOOL, depth - 1, env, alphabet, size - 1,
                                       positional)), relation)
    if kind in ("add", "sub", "min", "max"):
        node = {"add": syntax.Add, "sub": syntax.Sub, "min": syntax.Min, "max": syntax.Max}[kind]
        return node(draw(sub(syntax.COUNT)), draw(sub(syntax.COUNT)))
    if kind == "scale":
        return syntax.Scale(draw(st.integers(-3, 3)), draw(sub(syntax.COUNT)))
    return syntax.Conditional(draw(sub(syntax.BOOL)), draw(sub(syntax.COUNT)),
                              draw(sub(syntax.COUNT)))


@st.composite
def program_asts(draw, alphabet=("a", "b"), max_depth: int = 3, max_definitions: int = 6,
                 positional: bool = False, max_size: int = 3) -> syntax.Program:
    from crasp.depth import expr_depth

    env: dict[str, tuple[str, int]] = {}
    depths: dict[str, int] = {}
    definitions = []
    count = draw(st.integers(1, max_definitions))
    for index in range(count):
        last = index == count - 1
        type_ = syntax.BOOL if last else draw(st.sampled_from((syntax.BOOL, syntax.COUNT)))
        expr = draw(_expr(type_, max_depth, env, tuple(alphabet), draw(st.integers(0, max_size)),
                          positional))
        name = f"v{index}"
        depths[name] = expr_depth(expr, depths)
        env[name] = (type_, depths[name])
        definitions.append(syntax.Definition(name, expr, type_))
    return syntax.Program(tuple(definitions), tuple(alphabet), declared_alphabet=True)


def programs(alphabet=("a", "b"), max_depth: int = 4, max_definitions: int = 8,
             positional: bool = False):
    """Source text of random well-typed programs of depth at most ``max_depth``."""
    return program_asts(alphabet, max_depth, max_definitions, positional).map(format_program)


def token_strings(alphabet=("a", "b"), max_length: int = 12):
    return st.lists(st.sampled_from(alphabet), max_size=max_length)
