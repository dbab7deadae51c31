"""Pass: Program -> text. The canonical form, which parses back to an equal program.

Parentheses are printed only where the grammar's precedence needs them (see ``grammar.lark``):
a left operand needs them when it binds looser than its operator, a right operand also when
it binds equally (all binary operators are left-associative), and comparison operands always
bind tighter (comparisons do not chain). Comments are not kept.
"""

from __future__ import annotations

from crasp import syntax

CONDITIONAL, OR, AND, COMPARE, SUM, PRODUCT, PREFIX, ATOM = range(8)


def _precedence(expr: syntax.Expr) -> int:
    if isinstance(expr, syntax.Conditional):
        return CONDITIONAL
    if isinstance(expr, syntax.Or):
        return OR
    if isinstance(expr, syntax.And):
        return AND
    if isinstance(expr, syntax.Compare):
        return COMPARE
    if isinstance(expr, (syntax.Add, syntax.Sub)):
        return SUM
    if isinstance(expr, syntax.Scale):
        return PRODUCT
    if isinstance(expr, (syntax.Not, syntax.Count)):
        return PREFIX
    if isinstance(expr, syntax.IntConst) and expr.value < 0:
        return PREFIX
    return ATOM


def _wrap(expr: syntax.Expr, minimum: int) -> str:
    text = format_expr(expr)
    return text if _precedence(expr) >= minimum else f"({text})"


def _relation(relation: syntax.LocalRelation) -> str:
    if relation.args:
        return f"{relation.name}({', '.join(str(a) for a in relation.args)})"
    return relation.name


def format_expr(expr: syntax.Expr) -> str:
    if isinstance(expr, syntax.TokenTest):
        return f'"{expr.token}"'
    if isinstance(expr, syntax.BoolConst):
        return "true" if expr.value else "false"
    if isinstance(expr, syntax.IntConst):
        return str(expr.value)
    if isinstance(expr, syntax.Ref):
        return expr.name
    if isinstance(expr, syntax.PositionTest):
        if expr.name == "mod":
            return f"mod({expr.modulus}, {expr.residue})"
        return expr.name
    if isinstance(expr, syntax.Not):
        return "!" + _wrap(expr.operand, PREFIX)
    if isinstance(expr, syntax.Count):
        guard = f"[{_relation(expr.relation)}] " if expr.relation else ""
        return "#" + guard + _wrap(expr.body, PREFIX)
    if isinstance(expr, (syntax.Min, syntax.Max)):
        name = "min" if isinstance(expr, syntax.Min) else "max"
        return f"{name}({format_expr(expr.left)}, {format_expr(expr.right)})"
    if isinstance(expr, syntax.Scale):
        return f"{expr.factor} * {_wrap(expr.operand, PREFIX)}"
    if isinstance(expr, syntax.Compare):
        return f"{_wrap(expr.left, SUM)} {expr.op} {_wrap(expr.right, SUM)}"
    if isinstance(expr, syntax.Conditional):
        return (f"{_wrap(expr.if_true, OR)} if {_wrap(expr.condition, OR)} "
                f"else {_wrap(expr.if_false, CONDITIONAL)}")
    binary = {syntax.Or: ("||", OR), syntax.And: ("&&", AND),
              syntax.Add: ("+", SUM), syntax.Sub: ("-", SUM)}
    symbol, level = binary[type(expr)]
    return f"{_wrap(expr.left, level)} {symbol} {_wrap(expr.right, level + 1)}"


def format_program(program: syntax.Program) -> str:
    """The program in canonical form, as ``crasp fmt`` prints it.

    >>> import crasp
    >>> print(format_program(crasp.parse_program('x = (#"a") > (#"b" + 1)')), end="")
    x = #"a" > #"b" + 1
    """
    lines = [f"#import {name}" for name in program.imports]
    if program.declared_alphabet:
        lines.append("alphabet " + " ".join(f'"{t}"' for t in program.alphabet))
    for definition in program.definitions:
        text = format_expr(definition.expr)
        lines.append(text if definition.bare else f"{definition.name} = {text}")
    return "\n".join(lines) + "\n"
