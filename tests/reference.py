"""A plain reference evaluator, written straight from the semantics, for testing.

One string at a time, one position at a time, with explicit loops: no arrays, no prefix
sums, nothing shared with ``crasp.interpret``. Position -1 is BOS (the empty prefix).
"""

from __future__ import annotations

from crasp import syntax


def evaluate_at(program: syntax.Program, tokens: list[str], i: int) -> dict[str, object]:
    """Every definition's value at position i (0-based; -1 = BOS)."""
    memo: dict[tuple[str, int], object] = {}

    def value(name: str, position: int):
        key = (name, position)
        if key not in memo:
            memo[key] = expr(program.definition(name).expr, position)
        return memo[key]

    def expr(node, position: int):
        if isinstance(node, syntax.TokenTest):
            return position >= 0 and tokens[position] == node.token
        if isinstance(node, syntax.BoolConst):
            return node.value
        if isinstance(node, syntax.IntConst):
            return node.value
        if isinstance(node, syntax.PositionTest):
            return position % node.modulus == node.residue
        if isinstance(node, syntax.Ref):
            return value(node.name, position)
        if isinstance(node, syntax.Not):
            return not expr(node.operand, position)
        if isinstance(node, syntax.And):
            return bool(expr(node.left, position)) and bool(expr(node.right, position))
        if isinstance(node, syntax.Or):
            return bool(expr(node.left, position)) or bool(expr(node.right, position))
        if isinstance(node, syntax.Compare):
            a, b = expr(node.left, position), expr(node.right, position)
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
                    "!=": a != b}[node.op]
        if isinstance(node, syntax.Count):
            total = 0
            for j in range(0, position + 1):
                if node.relation is not None and j != position - node.relation.offset:
                    continue
                if expr(node.body, j):
                    total += 1
            return total
        if isinstance(node, syntax.Add):
            return expr(node.left, position) + expr(node.right, position)
        if isinstance(node, syntax.Sub):
            return expr(node.left, position) - expr(node.right, position)
        if isinstance(node, syntax.Scale):
            return node.factor * expr(node.operand, position)
        if isinstance(node, syntax.Min):
            return min(expr(node.left, position), expr(node.right, position))
        if isinstance(node, syntax.Max):
            return max(expr(node.left, position), expr(node.right, position))
        if isinstance(node, syntax.Conditional):
            branch = node.if_true if expr(node.condition, position) else node.if_false
            return expr(branch, position)
        raise TypeError(node)

    return {d.name: value(d.name, i) for d in program.definitions}


def accepts(program: syntax.Program, tokens: list[str]) -> bool:
    return bool(evaluate_at(program, tokens, len(tokens) - 1)[program.answer.name])
