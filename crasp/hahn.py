"""Warnings for expressions that Hahn's interpreter reads differently.

Hahn's ANTLR grammar lets a prefix operator take the whole binary expression after it (measured:
``!P || Q`` is ``!(P || Q)``, ``2 * x - y`` is ``2 * (x - y)``) and binds ``+`` tighter than
``-`` (``a - b + c`` is ``a - (b + c)``). crasp uses the conventional reading. Files written for
his tool come to crasp unchanged, so every place where the two readings differ, and both type
check, gets a warning that shows both.

An operand is unparenthesized exactly when it starts where its parent expression starts (a
left operand in parentheses starts one column after the parent's opening parenthesis).
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import syntax
from crasp.fmt import format_expr
from crasp.syntax import Span

_SYMBOL = {syntax.And: "&&", syntax.Or: "||", syntax.Add: "+", syntax.Sub: "-"}


@dataclass(frozen=True)
class PrecedenceWarning:
    span: Span
    crasp_reading: str
    hahn_reading: str

    def render(self, filename: str) -> str:
        return (f"{filename}:{self.span.line}:{self.span.column}: warning: Hahn's interpreter "
                f"reads this differently\n    crasp reads: {self.crasp_reading}\n"
                f"    Hahn reads:  {self.hahn_reading}\n"
                f"    add parentheses to make the meaning explicit")


def _hahn_reading(parent, left) -> str | None:
    symbol = _SYMBOL.get(type(parent))
    right = format_expr(parent.right)
    if isinstance(parent, (syntax.And, syntax.Or)) and isinstance(left, syntax.Not):
        return f"!({format_expr(left.operand)} {symbol} {right})"
    if isinstance(parent, syntax.Add) and isinstance(left, syntax.Sub):
        return f"{format_expr(left.left)} - ({format_expr(left.right)} + {right})"
    if isinstance(parent, (syntax.Add, syntax.Sub)) and isinstance(left, syntax.Scale):
        return f"{left.factor} * ({format_expr(left.operand)} {symbol} {right})"
    return None


def precedence_warnings(program: syntax.Program) -> list[PrecedenceWarning]:
    warnings = []
    for definition in program.definitions:
        for node in syntax.walk(definition.expr):
            if type(node) not in _SYMBOL or node.span is None or node.left.span is None:
                continue
            same_start = (node.span.line, node.span.column) == (node.left.span.line,
                                                               node.left.span.column)
            hahn = _hahn_reading(node, node.left) if same_start else None
            if hahn is not None:
                ours = f"({format_expr(node.left)}) {_SYMBOL[type(node)]} {format_expr(node.right)}"
                warnings.append(PrecedenceWarning(node.span, ours, hahn))
    return warnings
