"""Make tests/fixtures/hahn/programs.json: generated programs and Hahn's interpreter's answers.

    python scripts/hahn_fixtures.py --hahn-dir /tmp/hahn > tests/fixtures/hahn/programs.json
    python scripts/hahn_fixtures.py --hahn-dir /tmp/hahn --edges > tests/fixtures/hahn/edges.json
    PYTHONPATH=. python scripts/hahn_fixtures.py --summarize tests/fixtures/hahn/programs.json

``--hahn-dir`` is a checkout of m-hahn/c-rasp (its code never enters this repository; only its
outputs do). Each program is a fixed header of Boolean and count definitions followed by one
generated answer line that puts the operators in every position, parenthesized at random so
that the two readings (conventional and Hahn's) often differ. Only programs that Hahn's parser
reads without a syntax error, whose reading is well typed and whose answer is a Boolean are
kept. For each, the fixture holds his answer at every position of every input (all strings
over a, b, c up to length 4; "c" appears in no program, so it tests "any token accepted").
``--edges`` records instead what his command line prints (run as a subprocess, with the Python
that runs this script) for token literals that no input token equals and for a count as the
last line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import random
import sys

HEADER = ('#import pred\nP = "a"\nQ = "b" || "a" && "b"\nx = #"a"\ny = #"b" - 1\n'
          'n = 2 * #(P || Q)\n')
BOOL_NAMES, COUNT_NAMES = ("P", "Q"), ("x", "y", "n")
INPUTS = [" ".join(word) for length in range(1, 5)
          for word in itertools.product("abc", repeat=length)]


def _bool(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.2:
        return rng.choice(['"a"', '"b"', *BOOL_NAMES, "true", "false"])
    choice = rng.randrange(6)
    if choice == 0:
        return f"{_bool(rng, depth - 1)} && {_bool(rng, depth - 1)}"
    if choice == 1:
        return f"{_bool(rng, depth - 1)} || {_bool(rng, depth - 1)}"
    if choice == 2:
        return f"!{_maybe_paren(rng, _bool(rng, depth - 1))}"
    if choice == 3:
        op = rng.choice(["<", ">", "==", "!=", "<=", ">="])
        return f"{_count(rng, depth - 1)} {op} {_count(rng, depth - 1)}"
    return _maybe_paren(rng, _bool(rng, depth - 1), 0.7)


def _count(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.2:
        return rng.choice(['#"a"', *COUNT_NAMES, "0", "1", "2"])
    choice = rng.randrange(9)
    if choice == 0:
        return f"{_count(rng, depth - 1)} + {_count(rng, depth - 1)}"
    if choice == 1:
        return f"{_count(rng, depth - 1)} - {_count(rng, depth - 1)}"
    if choice == 2:
        return f"{rng.randint(2, 3)} * {_maybe_paren(rng, _count(rng, depth - 1))}"
    if choice == 3:
        return (f"{_count(rng, depth - 1)} if {_bool(rng, depth - 1)} "
                f"else {_count(rng, depth - 1)}")
    if choice == 4:
        return f"{rng.choice(['min', 'max'])}({_count(rng, depth - 1)}, {_count(rng, depth - 1)})"
    if choice == 5:
        return f"#{_maybe_paren(rng, _bool(rng, depth - 1))}"
    if choice == 6:
        return f"#[pred] {_maybe_paren(rng, _bool(rng, depth - 1))}"
    return _maybe_paren(rng, _count(rng, depth - 1), 0.7)


def _maybe_paren(rng: random.Random, text: str, probability: float = 0.4) -> str:
    return f"({text})" if rng.random() < probability else text


def programs(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    made: list[str] = []
    while len(made) < count:
        answer = _bool(rng, rng.randint(2, 4))
        text = HEADER + f"answer = {answer}\n"
        if text not in made:
            made.append(text)
    return made


def _hahn_type(node, types: dict[str, str]) -> str | None:
    """'bool' or 'count' for a well-typed node of Hahn's AST, else None."""
    name = type(node).__name__
    if name in ("BoolVariable", "CountVariable"):
        return types.get(node.name)
    if name in ("BoolLiteral", "StringLiteral"):
        return "bool"
    if name == "CountLiteral":
        return "count"
    if name == "NotExpr":
        return "bool" if _hahn_type(node.expr, types) == "bool" else None
    if name == "BinaryBoolExpr":
        ok = _hahn_type(node.left, types) == _hahn_type(node.right, types) == "bool"
        return "bool" if ok else None
    if name == "Comparison":
        ok = _hahn_type(node.left, types) == _hahn_type(node.right, types) == "count"
        return "bool" if ok else None
    if name in ("Count", "GuardedCount"):
        return "count" if _hahn_type(node.expr, types) == "bool" else None
    if name == "BinaryOp":
        ok = _hahn_type(node.left, types) == _hahn_type(node.right, types) == "count"
        return "count" if ok else None
    if name == "MultiplicationOp":
        return "count" if _hahn_type(node.expr, types) == "count" else None
    if name == "IfExpr":
        ok = (_hahn_type(node.condition, types) == "bool"
              and _hahn_type(node.then_branch, types) == _hahn_type(node.else_branch, types)
              == "count")
        return "count" if ok else None
    raise AssertionError(f"unknown node {name}")


def run_hahn(text: str, hahn_dir: str, scratch: str) -> list[str] | None:
    """Hahn's answer at every position of every input as '0'/'1' strings, or None."""
    sys.path.insert(0, hahn_dir)
    import parser as hahn_parser  # noqa: the checkout's module
    from tracing import Trace

    class LastValue(Trace):
        def accept_tokens(self, tokens):
            pass

        def accept(self, variable, value):
            self.value = value

        def accept_result(self, result):
            pass

    with open(scratch, "w") as handle:
        handle.write(text)
    hahn_parser.MyCraspVisitor.imports = []
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        program = hahn_parser.parse_file(scratch)
    if errors.getvalue():
        return None
    types = {"pred": None}
    for statement in program.statements:
        types[statement.variable] = _hahn_type(statement.expression, types)
    if types["answer"] != "bool":
        return None
    rows = []
    for line in INPUTS:
        last = LastValue()
        program.execute(line.split(), tracing=last)
        rows.append("".join("1" if value else "0" for value in last.value))
    return rows


EDGE_LITERALS = ['""', '" "', '"a b"', '"\t"', '" a"', '"a "', '"a\tb"']
EDGE_COUNTS = ['#"a"', '#"b" - 3', '0 * 12345678901234567890', '0 * 2 * 12345678901234567890',
               '12345678901234567890 * #"a" - 3', '2 * 3 * #"b"', '#x - #"a"', '#[pred] x']
EDGE_INPUTS = "a b\na\nb b a\n\n// a comment\nc a b\na\tb  a\n"


def edge_programs() -> list[str]:
    """Token literals that no input token equals, and a count as the last line: each literal
    with every connective, each count as the answer."""
    made = []
    for literal in EDGE_LITERALS:
        made.append(f'x = "a" || {literal}\ny = !{literal} && x\nz = !y && ({literal} || "b")\n')
        made.append(f'x = "a" || {literal}\nc = #{literal} + #x\n')
    for count in EDGE_COUNTS:
        made.append(f'#import pred\nx = "a" || ""\nc = {count}\n')
    return made


def run_hahn_cli(text: str, hahn_dir: str, scratch: str) -> list[str]:
    """What Hahn's command line prints for ``text`` on EDGE_INPUTS (his report lines only)."""
    import subprocess

    with open(scratch, "w") as handle:
        handle.write(text)
    trace = scratch + ".txt"
    done = subprocess.run([sys.executable, "crasp.py", "-c", scratch, "-t", trace],
                          input=EDGE_INPUTS, capture_output=True, text=True, cwd=hahn_dir,
                          check=True)
    return [line for line in done.stdout.splitlines() if not line.startswith("Trace written")]


def summarize(path: str) -> None:
    """Count, over a fixture file, crasp's agreement with Hahn's answers and its warnings."""
    import crasp
    from crasp.hahn import precedence_warnings

    fixtures = json.loads(open(path).read())
    inputs = [line.split() for line in fixtures["inputs"]]

    def answers(program) -> list[str]:
        output = crasp.evaluate(program, inputs).output
        return ["".join("1" if v else "0" for v in output[row, :len(tokens)])
                for row, tokens in enumerate(inputs)]

    programs = fixtures["programs"]
    agree = both = differ = warned = differ_and_warned = rejected = explained = 0
    for fixture in programs:
        agree += answers(crasp.parse_program(fixture["program"], dialect="hahn")) == \
            fixture["outputs"]
        try:
            program = crasp.parse_program(fixture["program"])
        except crasp.ProgramError as error:
            rejected += 1
            explained += "--dialect hahn" in error.render() and "reads this line as" in \
                error.render()
            continue
        both += 1
        differs = answers(program) != fixture["outputs"]
        warns = bool(precedence_warnings(program))
        differ, warned, differ_and_warned = (differ + differs, warned + warns,
                                             differ_and_warned + (differs and warns))
    print(f"{len(programs)} programs; --dialect hahn gives Hahn's answers for {agree}")
    print(f"{both} read by both dialects: {differ} answer differently, {warned} warned, "
          f"{differ_and_warned} both")
    print(f"{rejected} rejected conventionally, {explained} of them with Hahn's reading and "
          f"--dialect hahn in the error")


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--summarize", metavar="FIXTURES",
                           help="instead of making fixtures, count crasp's agreement with them")
    arguments.add_argument("--hahn-dir")
    arguments.add_argument("--count", type=int, default=300)
    arguments.add_argument("--seed", type=int, default=10)
    arguments.add_argument("--scratch", default="/tmp/hahn_fixture_program.cr")
    arguments.add_argument("--edges", action="store_true",
                           help="instead, his command line's output on edge_programs()")
    options = arguments.parse_args()
    if options.summarize:
        summarize(options.summarize)
        return
    if not options.hahn_dir:
        arguments.error("--hahn-dir is required to make fixtures")
    if options.edges:
        edges = [{"program": text, "stdout": run_hahn_cli(text, options.hahn_dir,
                                                          options.scratch)}
                 for text in edge_programs()]
        json.dump({"generator": "scripts/hahn_fixtures.py --edges", "stdin": EDGE_INPUTS,
                   "programs": edges}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    fixtures = []
    for text in programs(4 * options.count, options.seed):
        outputs = run_hahn(text, options.hahn_dir, options.scratch)
        if outputs is not None:
            fixtures.append({"program": text, "outputs": outputs})
        if len(fixtures) == options.count:
            break
    json.dump({"generator": "scripts/hahn_fixtures.py", "seed": options.seed,
               "inputs": INPUTS, "programs": fixtures}, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
