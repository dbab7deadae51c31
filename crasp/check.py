"""Pass 2, statements -> Program: resolve names and predicates, and type every expression.

C-RASP has two types. Booleans come from token tests, positional predicates, ``true``/``false``,
comparisons and ``! && ||``; counts come from ``#``, integer literals, ``+ -``, scaling,
``min``/``max``. ``c if P else d`` takes the type of its branches. Only Booleans are counted,
only counts are compared or added, and the program's answer (its last line) is a Boolean.

Each violation is a ``ProgramError`` pointing at the offending expression.

Names. A predicate name (``pos_even``, ``pred``, ``pred4``) is special only once imported;
``mod`` and ``offset`` are built in. In the conventional dialect a name is defined once and
cannot be an imported predicate's. In Hahn's dialect (``dialect="hahn"``) his interpreter's
environment is reproduced: a definition may reuse any name, and from then on the name means the
new definition (an imported ``pos_even`` included). A redefinition, or a definition of an
imported predicate's name, gets a fresh internal name (``x_2``, the first such name the program
does not use) so that every later pass sees distinct definitions and ``fmt`` prints a valid
conventional file; the uses after it are renamed with it.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Callable

from crasp import predicates, syntax
from crasp.errors import ProgramError
from crasp.util.inputs import can_be_input_token
from crasp.parse import ParsedProgram, Statement
from crasp.syntax import BOOL, COUNT, Span, Type

_ARTICLE = {BOOL: "a Boolean", COUNT: "a count"}


DIALECTS = ("crasp", "hahn")
RESERVED_BUILTINS = (predicates.BUILTIN_UNARY_CALL, predicates.BUILTIN_RELATION_CALL)


class _Checker:
    def __init__(self, parsed: ParsedProgram, dialect: str):
        self.parsed = parsed
        self.hahn = dialect == "hahn"
        self.imports: dict[str, Span] = {}
        self.defined: dict[str, tuple[Type, Span]] = {}
        self.internal: dict[str, str] = {}   # source name -> its current definition's name
        self.all_names = {s.name for s in parsed.statements if s.kind == "assign"}
        self.later_names = {s.name: s.name_span for s in parsed.statements if s.kind == "assign"}
        self.declared_alphabet: tuple[str, ...] | None = None
        self.declared_tokens: frozenset[str] = frozenset()   # the same, for membership
        self.literal_tokens: list[str] = []
        self.rewrites: list[tuple[int, str]] = []
        self.methods: dict[type, Callable] = {}   # node type -> its expr_ method

    def error(self, message: str, span: Span | None, expected: str | None = None,
              note: str | None = None) -> ProgramError:
        return ProgramError(message, source=self.parsed.source, filename=self.parsed.filename,
                            span=span, expected=expected, note=note)

    def _end_of_source(self) -> Span:
        """Just past the last character of the last line that holds any (where a definition
        is missing); 1:1 in an empty text."""
        lines = self.parsed.source.splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        line, column = (len(lines), len(lines[-1]) + 1) if lines else (1, 1)
        return Span(line, column, line, column)

    # ------------------------------------------------------------ statements

    def program(self, extra_alphabet: tuple[str, ...], count_answer: bool) -> syntax.Program:
        statements = self.parsed.statements
        for statement in statements:
            if statement.kind == "import":
                self.import_(statement)
            elif statement.kind == "alphabet":
                self.alphabet(statement)
        definitions: list[syntax.Definition] = []
        computing = [s for s in statements if s.kind in ("assign", "bare")]
        for index, statement in enumerate(computing):
            if statement.kind == "bare" and index != len(computing) - 1:
                raise self.error("a bare expression can only be the program's last line",
                                 statement.span, expected="NAME = expression")
            definitions.append(self.definition(statement))
        if not definitions:
            raise self.error("the program defines nothing", self._end_of_source(),
                             expected="at least one line NAME = expression; the last one is "
                                      "the program's answer")
        answer = definitions[-1]
        if answer.type != BOOL and not (self.hahn and count_answer):
            raise self.error(f"the program's answer '{self._shown(answer)}' is a count",
                             answer.expr.span or answer.span,
                             expected="a Boolean last line, for example a comparison such as "
                                      "#\"a\" > 0",
                             note="Hahn's interpreter prints the count at the last position; "
                                  "so does crasp run --dialect hahn" if self.hahn else None)
        alphabet = self._alphabet(extra_alphabet)
        return syntax.Program(tuple(definitions), alphabet,
                              declared_alphabet=self.declared_alphabet is not None,
                              imports=tuple(self.imports), source=self.parsed.source,
                              filename=self.parsed.filename,
                              header_lines=tuple(s.span.line for s in statements
                                                 if s.kind in ("import", "alphabet")),
                              rewrites=tuple(self.rewrites))

    @staticmethod
    def _shown(definition: syntax.Definition) -> str:
        return "the last expression" if definition.bare else definition.name

    def import_(self, statement: Statement) -> None:
        if statement.name not in predicates.IMPORTABLE:
            raise self.error(f"unknown import '{statement.name}'", statement.name_span,
                             expected="one of " + ", ".join(predicates.IMPORTABLE))
        self.imports[statement.name] = statement.span

    def alphabet(self, statement: Statement) -> None:
        if self.declared_alphabet is not None:
            raise self.error("the alphabet is declared twice", statement.span,
                             expected="one alphabet line")
        seen: dict[str, None] = {}
        for token, span in statement.tokens:
            if token in seen:
                raise self.error(f"token \"{token}\" is declared twice", span)
            seen[token] = None
        self.declare_alphabet(tuple(seen))

    def declare_alphabet(self, tokens: tuple[str, ...]) -> None:
        self.declared_alphabet, self.declared_tokens = tokens, frozenset(tokens)

    def definition(self, statement: Statement) -> syntax.Definition:
        if statement.kind == "assign" and not self.hahn:
            self.require_new_name(statement)
        expr, type_ = self.expr(statement.expr)
        source_name = statement.name if statement.kind == "assign" else syntax.ANSWER_NAME
        name = source_name
        if source_name in self.internal or source_name in self.imports or (
                self.hahn and source_name in RESERVED_BUILTINS):
            name = self.fresh_name(source_name)   # Hahn's dialect: a redefinition
            why = ("a redefinition" if source_name in self.internal else
                   "an imported predicate's name" if source_name in self.imports else
                   f"crasp's dialect reserves '{source_name}' for {source_name}(...)")
            self.rewrites.append((statement.span.line, f"'{source_name}' defined here is "
                                                       f"named '{name}' ({why})"))
        self.internal[source_name] = name
        self.defined[name] = (type_, statement.name_span or statement.span)
        return syntax.Definition(name, expr, type_, bare=statement.kind == "bare",
                                 span=statement.span)

    def require_new_name(self, statement: Statement) -> None:
        name = statement.name
        if name in self.defined:
            first = self.defined[name][1]
            raise self.error(f"'{name}' is already defined on line {first.line}",
                             statement.name_span, expected="a new name",
                             note="Hahn's interpreter allows a redefinition (the later one is "
                                  "used from then on); read the file with --dialect hahn")
        if name in self.imports or name in RESERVED_BUILTINS:
            raise self.error(f"'{name}' is the name of a predicate", statement.name_span,
                             expected="another name" + (" (or drop its #import)"
                                                        if name in self.imports else ""))

    def fresh_name(self, name: str) -> str:
        suffix = 2
        while f"{name}_{suffix}" in self.all_names:
            suffix += 1
        self.all_names.add(f"{name}_{suffix}")
        return f"{name}_{suffix}"

    def _alphabet(self, extra: tuple[str, ...]) -> tuple[str, ...]:
        if self.declared_alphabet is not None:
            return self.declared_alphabet + tuple(dict.fromkeys(
                t for t in extra if t not in self.declared_tokens))
        return tuple(dict.fromkeys([*self.literal_tokens, *extra]))

    # ------------------------------------------------------------ expressions

    def expect(self, node: syntax.Expr, type_: Type, got: Type, role: str,
               expected: str) -> None:
        if got != type_:
            raise self.error(f"{role} needs {_ARTICLE[type_]}, but this is {_ARTICLE[got]}",
                             node.span, expected=expected)

    def expr(self, node: syntax.Expr) -> tuple[syntax.Expr, Type]:
        """(the resolved node, its type); children first, without recursion (``syntax.fold``)."""
        return syntax.fold(node, self._node)

    def _node(self, node: syntax.Expr, parts: list[tuple[syntax.Expr, Type]]):
        """``parts``: each child of ``node``, resolved, with its type."""
        method = self.methods.get(type(node))
        if method is None:   # looked up once per node type, not once per node
            method = self.methods[type(node)] = getattr(self, "expr_" + type(node).__name__)
        return method(node, *parts)

    def expr_TokenTest(self, node: syntax.TokenTest):
        if not can_be_input_token(node.token):   # only Hahn's parser reads such literals
            self.rewrites.append((node.span.line if node.span else 0,
                                  f"the token literal \"{node.token}\" equals no input token "
                                  "(inputs are split on whitespace), so it is written false"))
            return syntax.BoolConst(False, span=node.span), BOOL
        if self.declared_alphabet is not None and node.token not in self.declared_tokens:
            raise self.error(f"token \"{node.token}\" is not in the declared alphabet", node.span,
                             expected="one of " + " ".join(f'"{t}"'
                                                           for t in self.declared_alphabet))
        self.literal_tokens.append(node.token)
        return node, BOOL

    def expr_BoolConst(self, node):
        return node, BOOL

    def expr_PositionTest(self, node):
        return node, BOOL

    def expr_IntConst(self, node):
        return node, COUNT

    def expr_Ref(self, node: syntax.Ref):
        if node.name in self.internal:
            name = self.internal[node.name]
            return replace(node, name=name), self.defined[name][0]
        if node.name in predicates.IMPORTABLE_UNARY:
            self.require_import(node.name, node.span)
            modulus, residue = predicates.IMPORTABLE_UNARY[node.name]
            return syntax.PositionTest(node.name, modulus, residue, span=node.span), BOOL
        if node.name in predicates.IMPORTABLE_RELATIONS:
            raise self.error(f"'{node.name}' is a binary relation, usable only as #[{node.name}] P",
                             node.span, expected=f"#[{node.name}] followed by a Boolean")
        if node.name in self.later_names:
            line = self.later_names[node.name].line
            raise self.error(f"'{node.name}' is used before its definition on line {line}",
                             node.span, expected="a name defined on an earlier line")
        close = difflib.get_close_matches(node.name, list(self.internal), n=1)
        note = f"did you mean '{close[0]}'?" if close else None
        raise self.error(f"undefined name '{node.name}'", node.span,
                         expected="a name defined on an earlier line, or a token literal in "
                                  f'quotes such as "{node.name}"', note=note)

    def require_import(self, name: str, span: Span | None) -> None:
        if name not in self.imports:
            raise self.error(f"predicate '{name}' is used without its import", span,
                             expected=f"a line '#import {name}' before its use")

    def expr_Not(self, node: syntax.Not, checked):
        operand, type_ = checked
        self.expect(node.operand, BOOL, type_, "'!'",
                    "a Boolean after '!'; prefix operators bind tightest, so write !(c < d) "
                    "to negate a comparison")
        return syntax.with_children(node, (operand,)), BOOL

    def _pair(self, node, parts, type_: Type, symbol: str, expected: str):
        (left, left_type), (right, right_type) = parts
        for side, side_type in ((node.left, left_type), (node.right, right_type)):
            self.expect(side, type_, side_type, symbol, expected)
        return syntax.with_children(node, (left, right)), type_

    def _boolean_pair(self, node, parts, symbol: str):
        return self._pair(node, parts, BOOL, f"'{symbol}'",
                          f"Booleans on both sides of '{symbol}'; compare counts first, "
                          "for example c > 0")

    def expr_And(self, node, *parts):
        return self._boolean_pair(node, parts, "&&")

    def expr_Or(self, node, *parts):
        return self._boolean_pair(node, parts, "||")

    def expr_Compare(self, node: syntax.Compare, *parts):
        (left, left_type), (right, right_type) = parts
        for side, type_ in ((node.left, left_type), (node.right, right_type)):
            if type_ == BOOL:
                raise self.error(f"'{node.op}' compares counts, but this is a Boolean", side.span,
                                 expected="counts on both sides; to compare Booleans use "
                                          "&&, || and !")
        return syntax.with_children(node, (left, right)), BOOL

    def expr_Count(self, node: syntax.Count, checked):
        if node.relation is not None and node.relation.name in predicates.IMPORTABLE_RELATIONS:
            self.require_import(node.relation.name, node.relation.span)
        body, type_ = checked
        if type_ != BOOL:
            raise self.error("'#' counts positions where a Boolean holds, but this is a count",
                             node.body.span,
                             expected="a Boolean after '#'; counts cannot be counted")
        return syntax.with_children(node, (body,)), COUNT

    def _count_pair(self, node, parts, symbol: str):
        return self._pair(node, parts, COUNT, symbol,
                          f"counts in {symbol}; to count a Boolean P write #P")

    def expr_Add(self, node, *parts):
        return self._count_pair(node, parts, "'+'")

    def expr_Sub(self, node, *parts):
        return self._count_pair(node, parts, "'-'")

    def expr_Min(self, node, *parts):
        return self._count_pair(node, parts, "min()")

    def expr_Max(self, node, *parts):
        return self._count_pair(node, parts, "max()")

    def expr_Scale(self, node: syntax.Scale, checked):
        operand, type_ = checked
        self.expect(node.operand, COUNT, type_, "'*'",
                    "a count multiplied by an integer literal; to count a Boolean P write #P")
        return syntax.with_children(node, (operand,)), COUNT

    def expr_Conditional(self, node: syntax.Conditional, *parts):
        (condition, condition_type), (if_true, true_type), (if_false, false_type) = parts
        self.expect(node.condition, BOOL, condition_type, "the condition of 'if'",
                    "a Boolean between 'if' and 'else'")
        if true_type != false_type:
            raise self.error(f"the branches of 'if' have different types: {_ARTICLE[true_type]} "
                             f"and {_ARTICLE[false_type]}", node.span,
                             expected="two counts or two Booleans")
        return syntax.with_children(node, (condition, if_true, if_false)), true_type


def check(parsed: ParsedProgram, extra_alphabet: tuple[str, ...] = (),
          dialect: str = "crasp", count_answer: bool = False) -> syntax.Program:
    """Resolve and type a parsed program; raise ``ProgramError`` on the first problem.

    ``count_answer`` lets a program read in Hahn's dialect end with a count, whose value his
    interpreter prints (``crasp run --dialect hahn`` does too); every other use needs a Boolean.
    """
    return _Checker(parsed, dialect).program(tuple(extra_alphabet), count_answer)


def expression_checker(program: syntax.Program) -> Callable[[int, syntax.Expr],
                                                              tuple[syntax.Expr, Type]]:
    """``check_at(index, expr)``: ``expr`` resolved and typed where definition ``index`` of
    ``program`` stands (the names defined before it, the program's imports and alphabet): how
    Hahn's reading of that line is compared with crasp's. Raises ``ProgramError`` when it is
    not well typed. The indices of successive calls must not decrease: each definition is
    registered once, as the calls pass it, so reading every line of a program costs time
    linear in its length (a new checker per line registered every earlier definition again:
    4.2 s of 6.3 s to load a chain of 1,600 definitions)."""
    checker = _Checker(ParsedProgram((), program.source, program.filename), "crasp")
    checker.imports = {name: None for name in program.imports}
    if program.declared_alphabet:
        checker.declare_alphabet(program.alphabet)
    registered = 0

    def check_at(index: int, expr: syntax.Expr) -> tuple[syntax.Expr, Type]:
        nonlocal registered
        if index < registered:
            raise ValueError(f"definition {index} comes before the last one checked")
        for definition in program.definitions[registered:index]:
            checker.internal[definition.name] = definition.name
            checker.defined[definition.name] = (definition.type, definition.span)
        registered = index
        return checker.expr(expr)
    return check_at
