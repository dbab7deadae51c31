"""Pass: Program -> DepthReport. Counting depth of every definition and of the program.

Depth, per Knee-Deep (def. TLC_depth, transferred to straight-line programs): a token test, a
positional predicate and a constant have depth 0; ``#P`` (guarded or not) has depth(P) + 1;
every other operation takes the maximum over its operands; a name has the depth of its
definition. The program's depth is the depth of its answer (the last definition), which is the
number of transformer layers the depth-preserving construction needs; definitions the answer
does not use are reported but do not count.

The definition DAG is a dict from each definition to the names it uses (plain Python: a graph
library would cost every command its import time at startup); the critical path is a chain of
definitions, from the answer down, each reached through the use that sets its user's depth.

A second measure, Knee-Deep's TL[◁#]^pos depth (App. E/F): there a local relation is the
operator Y ("φ held one position back"), which adds no depth, so a guarded count
``#[offset(c)] P`` (0 or 1: whether Y^c P holds) has depth(P) instead of depth(P) + 1; MOD adds
none in either measure. ``analyze`` reports both, each with its critical path
(``tl_pos_depth``, ``tl_pos_critical_path``); they differ only for local relations. The
compiler builds crasp's depth in layers (a local count needs an attention layer).
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp import syntax


Uses = tuple[list[tuple[str, int, int]], int, int]
"""What both depth measures need from an expression, from one walk (``uses``)."""


def uses(expr: syntax.Expr) -> Uses:
    """Each name used in ``expr`` with the number of counts that enclose the use, in crasp's
    measure and in Knee-Deep's TL[◁#]^pos measure (where a guarded, local count is the
    depth-free Y), in the order of a walk that reads the last child first; and the most counts
    enclosing any node (itself included) in each measure. One walk serves every question that
    ``analyze`` asks of a definition."""
    found: list[tuple[str, int, int]] = []
    deepest = deepest_local = 0
    stack = [(expr, 0, 0)]
    pop, push, direct_children = stack.pop, stack.append, syntax.children
    while stack:
        node, counts, local = pop()
        kind = type(node)
        if kind is syntax.Ref:
            found.append((node.name, counts, local))
            continue
        if kind is syntax.Count:
            counts += 1
            local += node.relation is None
            deepest, deepest_local = max(deepest, counts), max(deepest_local, local)
        for child in direct_children(node):
            push((child, counts, local))
    return found, deepest, deepest_local


def _depth(summary: Uses, depths: dict[str, int], local_free: bool) -> int:
    found, deepest, deepest_local = summary
    if local_free:
        return max([deepest_local] + [depths[name] + local for name, _, local in found])
    return max([deepest] + [depths[name] + counts for name, counts, _ in found])


def expr_depth(expr: syntax.Expr, depths: dict[str, int], local_free: bool = False) -> int:
    """Depth of one expression, given the depths of the names it uses: the largest, over the
    names and constants it reads, of the definition's depth plus the counts enclosing the use
    (the same as the recursive rule above, computed with a stack, so any nesting works)."""
    return _depth(uses(expr), depths, local_free)


def references(expr: syntax.Expr, local_free: bool = False) -> list[tuple[str, int]]:
    """Each name used in ``expr`` with the number of counts that enclose the use."""
    return [(name, local if local_free else counts) for name, counts, local in uses(expr)[0]]


def _graph(summaries: dict[str, Uses]) -> dict[str, tuple[str, ...]]:
    return {name: tuple(dict.fromkeys(used for used, _, _ in found))
            for name, (found, _, _) in summaries.items()}


def dependency_graph(program: syntax.Program) -> dict[str, tuple[str, ...]]:
    """Each definition -> the names it uses (each once, in order of first use)."""
    return _graph({definition.name: uses(definition.expr) for definition in program.definitions})


def _reached(graph: dict[str, tuple[str, ...]], start: str) -> set[str]:
    """``start`` and every definition it uses, directly or not."""
    reached, stack = {start}, [start]
    while stack:
        for name in graph.get(stack.pop(), ()):
            if name not in reached:
                reached.add(name)
                stack.append(name)
    return reached


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
    graph: dict[str, tuple[str, ...]]
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


def definition_depths(program: syntax.Program, local_free: bool = False,
                      summaries: dict[str, Uses] | None = None) -> dict[str, int]:
    summaries = summaries or {d.name: uses(d.expr) for d in program.definitions}
    depths: dict[str, int] = {}
    for definition in program.definitions:
        depths[definition.name] = _depth(summaries[definition.name], depths, local_free)
    return depths


def _critical_path(program: syntax.Program, depths: dict[str, int], summaries: dict[str, Uses],
                   local_free: bool = False) -> tuple[str, ...]:
    path = [program.answer.name]
    while True:
        target = depths[path[-1]]
        found = [(name, local if local_free else counts)
                 for name, counts, local in summaries[path[-1]][0]]
        chosen = None
        # Prefer the use under the fewest counts: it carries the most of the depth itself.
        for name, counts in sorted(found, key=lambda r: r[1]):
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
    summaries = {definition.name: uses(definition.expr) for definition in program.definitions}
    depths = definition_depths(program, summaries=summaries)
    tl_pos = definition_depths(program, local_free=True, summaries=summaries)
    graph = _graph(summaries)
    answer = program.answer.name
    used = _reached(graph, answer)
    report = tuple(
        DefinitionDepth(d.name, d.type, depths[d.name], d.name in used,
                        d.span.line if d.span else None, tl_pos[d.name])
        for d in program.definitions
    )
    return DepthReport(
        depth=depths[answer],
        definitions=report,
        critical_path=_critical_path(program, depths, summaries),
        unused=tuple(d.name for d in program.definitions if d.name not in used),
        graph=graph,
        tl_pos_depth=tl_pos[answer],
        tl_pos_critical_path=_critical_path(program, tl_pos, summaries, local_free=True),
    )


def depth_of(program: syntax.Program) -> int:
    """The depth of the program's answer (its last definition).

    >>> import crasp
    >>> depth_of(crasp.load_program(crasp.example("L3")))
    3
    """
    return definition_depths(program)[program.answer.name]
