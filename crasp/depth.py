"""Pass: Program -> DepthReport. Counting depth of every definition and of the program.

Depth, per Knee-Deep (def. TLC_depth, transferred to straight-line programs): a token test, a
positional predicate and a constant have depth 0; ``#P`` (guarded or not) has depth(P) + 1;
every other operation takes the maximum over its operands; a name has the depth of its
definition. The program's depth is the depth of its answer (the last definition), which is the
number of transformer layers the depth-preserving construction needs; definitions the answer
does not use are reported but do not count.

The definition DAG (an edge from each definition to every definition that uses it) is a
``networkx.DiGraph``; the critical path is a chain of definitions, from the answer down, each
reached through the use that sets its user's depth.

A second measure, Knee-Deep's TL[◁#]^pos depth (App. E/F): there a local relation is the
operator Y ("φ held one position back"), which adds no depth, so a guarded count
``#[offset(c)] P`` (0 or 1: whether Y^c P holds) has depth(P) instead of depth(P) + 1; MOD adds
none in either measure. ``analyze`` reports both, each with its critical path
(``tl_pos_depth``, ``tl_pos_critical_path``); they differ only for local relations. The
compiler builds crasp's depth in layers (a local count needs an attention layer).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from crasp import syntax


def _level(node: syntax.Expr, local_free: bool) -> int:
    """The levels ``node`` adds: 1 for a count, except a guarded (local) count in Knee-Deep's
    TL[◁#]^pos measure (``local_free``), where it is the depth-free Y."""
    if not isinstance(node, syntax.Count):
        return 0
    return 0 if local_free and node.relation is not None else 1


def expr_depth(expr: syntax.Expr, depths: dict[str, int], local_free: bool = False) -> int:
    """Depth of one expression, given the depths of the names it uses: the largest, over the
    names and constants it reads, of the definition's depth plus the counts enclosing the use
    (the same as the recursive rule above, computed with a stack, so any nesting works)."""
    deepest, stack = 0, [(expr, 0)]
    while stack:
        node, counts = stack.pop()
        if isinstance(node, syntax.Ref):
            deepest = max(deepest, depths[node.name] + counts)
            continue
        counts += _level(node, local_free)
        deepest = max(deepest, counts)
        stack.extend((child, counts) for child in syntax.children(node))
    return deepest


def references(expr: syntax.Expr, local_free: bool = False) -> list[tuple[str, int]]:
    """Each name used in ``expr`` with the number of counts that enclose the use."""
    found: list[tuple[str, int]] = []
    stack = [(expr, 0)]
    while stack:
        node, counts = stack.pop()
        if isinstance(node, syntax.Ref):
            found.append((node.name, counts))
        inner = counts + _level(node, local_free)
        stack.extend((child, inner) for child in syntax.children(node))
    return found


def dependency_graph(program: syntax.Program) -> nx.DiGraph:
    graph = nx.DiGraph()
    for definition in program.definitions:
        graph.add_node(definition.name)
        for name, _ in references(definition.expr):
            graph.add_edge(name, definition.name)
    return graph


@dataclass(frozen=True)
class DefinitionDepth:
    name: str
    type: syntax.Type
    depth: int
    used: bool
    line: int | None
    tl_pos_depth: int = 0   # Knee-Deep's TL[◁#]^pos measure (local relations add no depth)


@dataclass(frozen=True)
class DepthReport:
    depth: int
    definitions: tuple[DefinitionDepth, ...]
    critical_path: tuple[str, ...]
    unused: tuple[str, ...]
    graph: nx.DiGraph
    tl_pos_depth: int = 0
    tl_pos_critical_path: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {
            "depth": self.depth,
            "definitions": [
                {"name": d.name, "type": d.type, "depth": d.depth, "used": d.used, "line": d.line,
                 "tl_pos_depth": d.tl_pos_depth}
                for d in self.definitions
            ],
            "critical_path": list(self.critical_path),
            "unused": list(self.unused),
            "tl_pos_depth": self.tl_pos_depth,
            "tl_pos_critical_path": list(self.tl_pos_critical_path),
        }


def definition_depths(program: syntax.Program, local_free: bool = False) -> dict[str, int]:
    depths: dict[str, int] = {}
    for definition in program.definitions:
        depths[definition.name] = expr_depth(definition.expr, depths, local_free)
    return depths


def _critical_path(program: syntax.Program, depths: dict[str, int],
                   local_free: bool = False) -> tuple[str, ...]:
    by_name = {definition.name: definition for definition in program.definitions}
    path = [program.answer.name]
    while True:
        definition = by_name[path[-1]]
        target = depths[definition.name]
        chosen = None
        # Prefer the use under the fewest counts: it carries the most of the depth itself.
        for name, counts in sorted(references(definition.expr, local_free),
                                   key=lambda r: r[1]):
            if depths[name] + counts == target:
                chosen = name
                break
        if chosen is None:
            return tuple(path)
        path.append(chosen)


def analyze(program: syntax.Program) -> DepthReport:
    """The depth of the program and of every definition (the nesting of counting operators,
    Knee-Deep's C-RASP depth), the critical path and the unused definitions.

    >>> import crasp
    >>> report = analyze(crasp.parse_program('x = #"a" > 0\\ny = #x >= 1'))
    >>> report.depth, [(d.name, d.depth) for d in report.definitions], report.critical_path
    (2, [('x', 1), ('y', 2)], ('y', 'x'))
    """
    depths = definition_depths(program)
    tl_pos = definition_depths(program, local_free=True)
    graph = dependency_graph(program)
    answer = program.answer.name
    used = nx.ancestors(graph, answer) | {answer}
    report = tuple(
        DefinitionDepth(d.name, d.type, depths[d.name], d.name in used,
                        d.span.line if d.span else None, tl_pos[d.name])
        for d in program.definitions
    )
    return DepthReport(
        depth=depths[answer],
        definitions=report,
        critical_path=_critical_path(program, depths),
        unused=tuple(d.name for d in program.definitions if d.name not in used),
        graph=graph,
        tl_pos_depth=tl_pos[answer],
        tl_pos_critical_path=_critical_path(program, tl_pos, local_free=True),
    )


def depth_of(program: syntax.Program) -> int:
    """The depth of the program's answer (its last definition).

    >>> import crasp
    >>> depth_of(crasp.load_program(crasp.example("L3")))
    3
    """
    return definition_depths(program)[program.answer.name]
