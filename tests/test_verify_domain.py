"""Questions asked of the strings a domain program accepts (``crasp equiv --domain``, ``crasp
check --domain``): every search against a plain reference (the interpreter on every string),
the shipped prefix programs of L_k and E_k against the languages' oracles, and the CLI."""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crasp
from crasp.cli import cli
from crasp.languages import LANGUAGES, get_language
from crasp.languages.programs import SHIPPED_PREDICTION
from crasp import syntax
from crasp.verify import Question, bounded, decide, enumeration
from crasp.fmt import format_program
from crasp.verify.closure import cut_to_domain, is_prefix_closed
from crasp.verify.explain import confirm
from strategies import program_asts


def program(text: str, name: str = "<string>") -> crasp.Program:
    return crasp.parse_program(text, filename=name)


def shortest_violation(question: Question, alphabet, max_length: int):
    """The reference: every string in order of length, each program run by the interpreter;
    the first whose last position violates the question where the domain accepts."""
    for length in range(max_length + 1):
        strings = [list(s) for s in itertools.product(alphabet, repeat=length)]
        accepted = [crasp.evaluate(p, strings).accept for p in question.evaluated]
        for row, tokens in enumerate(strings):
            answers = [bool(a[row]) for a in accepted]
            differ = {"equivalent": answers[0] != answers[1],
                      "includes": answers[1] and not answers[0],
                      "empty": answers[0], "universal": not answers[0]}[question.kind]
            if differ and answers[-1]:
                return tuple(tokens)
    return None


def check_against_reference(question: Question, alphabet, max_length: int) -> None:
    expected = shortest_violation(question, alphabet, max_length)
    for search in (bounded.first_violation, enumeration.first_violation):
        found = search(question, alphabet, max_length)
        assert (found is None) == (expected is None), (search, found, expected)
        if found is not None:
            assert len(found.tokens) == len(expected)
            assert confirm(question, found.tokens).answers[-1] is True   # the domain's
    verdict = decide(question, max_length, alphabet, method="smt", unbounded=True,
                     deepen=0, timeout=60)
    if expected is not None:
        assert verdict.outcome == "counterexample"
        assert len(verdict.counterexample.tokens) == len(expected)
    else:
        assert verdict.outcome != "counterexample" or \
            len(verdict.counterexample.tokens) > max_length
        if verdict.outcome == "proved":   # then no string a little longer violates either
            assert shortest_violation(question, alphabet, max_length + 2) is None


# The random programs name their definitions v0, v1, ... all alike: the domain's names are the
# compared programs' names, which no search may confuse.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True),
       program_asts(max_depth=2, max_definitions=3, positional=True),
       program_asts(max_depth=2, max_definitions=3), st.integers(0, 6))
def test_equivalence_on_a_domain_matches_the_interpreter_on_every_string(first, second, domain,
                                                                         max_length):
    question = Question("equivalent", (first, second), ("A", "B"), domain)
    check_against_reference(question, ("a", "b", "?"), max_length)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3, positional=True),
       program_asts(max_depth=2, max_definitions=3), st.sampled_from(["empty", "universal"]),
       st.integers(0, 6))
def test_single_program_questions_on_a_domain_match_the_interpreter(prog, domain, kind,
                                                                     max_length):
    check_against_reference(Question(kind, (prog,), ("PROG",), domain), ("a", "b"), max_length)


CLOSING = ["{c} <= {n}", "{c} < {n}", "{c} == 0", "{n} >= {c}", "!({c} >= {n})", "!({c} > {n})",
           "{n} > {c}", "0 == {c}"]


@st.composite
def closed_domains(draw) -> syntax.Program:
    """A random program whose answer joins closing comparisons over counts of its random
    definitions (and maybe ``#true >= 1``) by conjunctions and disjunctions, written directly
    or through De Morgan: prefix-closed by construction."""
    base = draw(program_asts(max_depth=1, max_definitions=3))
    booleans = [d.name for d in base.definitions if d.type == syntax.BOOL] + ['"a"', '"b"']
    closing = [draw(st.sampled_from(CLOSING)).format(
        c=" + ".join(f"#{draw(st.sampled_from(booleans))}"
                     for _ in range(draw(st.integers(1, 2)))), n=draw(st.integers(0, 3)))
               for _ in range(draw(st.integers(1, 4)))]
    if draw(st.booleans()):
        closing.append("#true >= 1")
    while len(closing) > 1:   # joined pairwise by && or ||, some through De Morgan
        first, second = closing.pop(), closing.pop()
        closing.append(draw(st.sampled_from(
            ["({} && {})", "({} || {})", "!(!({}) || !({}))", "!(!({}) && !({}))"]))
            .format(first, second))
    text = "\n".join(format_program(base).splitlines() + ["domain = " + closing[0]])
    return crasp.parse_program(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(closed_domains())
def test_a_recognized_closed_domain_is_prefix_closed_on_every_string(domain):
    """The recognizer's soundness: where it says closed, the domain holding at a token
    position means it held at every token position before (all strings up to 7 tokens)."""
    assert is_prefix_closed(domain)
    strings = [list(s) for n in range(1, 8) for s in itertools.product("ab", repeat=n)]
    output = crasp.evaluate(domain, strings).output
    for row, tokens in enumerate(strings):
        held = output[row, :len(tokens)].tolist()
        assert held == sorted(held, reverse=True), ("".join(tokens), held)


@pytest.mark.parametrize("text", [
    'x = #"a" >= 1', 'x = #"a" == 1', 'x = #"a" == 0 || #"b" >= 1', 'x = #"a" - #"b" <= 0',
    'x = #[offset(1)] "a" == 0', 'x = #"a" <= #"b"', 'x = !(#"a" <= 1)', 'x = #"a" != 0',
    'x = #(#"a" >= 1) >= 1 && #"b" == 0', 'x = !(#"a" == 0 && #"b" == 0)',
    'x = !(!(#"a" >= 1))'])
def test_what_the_recognizer_does_not_take_for_closed(text):
    assert not is_prefix_closed(program(text))


def test_the_shipped_prefix_programs_are_recognized_as_closed():
    for family in "LE":
        for k in SHIPPED_PREDICTION:
            assert is_prefix_closed(crasp.load_program(crasp.example(f"{family}{k}_prefixes")))


def test_samples_are_cut_where_the_domain_stops_holding():
    domain = crasp.load_program(crasp.example("L3_prefixes"))
    cut = cut_to_domain([list("abab"), list("ba"), list("aab"), [], list("abaab"),
                         list("aba")], domain)
    assert cut == [list("aba"), [], list("aab"), list("abaa")]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_asts(max_depth=2, max_definitions=3), program_asts(max_depth=2, max_definitions=3),
       closed_domains(), st.integers(0, 6))
def test_equivalence_on_a_closed_domain_matches_the_interpreter(first, second, domain,
                                                                max_length):
    """Where the searches assume the domain at every position (and sample within it)."""
    question = Question("equivalent", (first, second), ("A", "B"), domain)
    check_against_reference(question, ("a", "b", "?"), max_length)


def test_a_domain_with_the_second_programs_names_is_not_confused_with_it():
    """The sweep pairs definitions of A and B by name; the domain's ``x`` and ``answer`` are
    neither. On strings of a's (the domain; the empty one is not in it) all three agree."""
    first = program('x = #"a" > #"b"\nanswer = x')
    second = program('x = #"b" < #"a"\nanswer = x')
    domain = program('x = #"a" >= 1\nanswer = x && #"b" == 0')
    question = Question("equivalent", (first, program('x = #"a" >= #"b"\nanswer = x')),
                        ("A", "B"), domain)
    check_against_reference(question, ("a", "b"), 6)   # they differ on "", outside
    assert decide(question, 6, ("a", "b"), unbounded=True).outcome == "proved"
    question = Question("equivalent", (first, second), ("A", "B"), domain)
    assert decide(question, 6, ("a", "b"), unbounded=True).outcome == "proved"


def test_the_prediction_program_is_the_language_on_the_tasks_strings_only():
    """L3's prediction program answers as L3 exactly on the prefixes of L3's strings: without
    the domain they differ on "ba" (outside the task); with it the answer is proved for every
    length."""
    predict, language, prefixes = (crasp.load_program(crasp.example(name)) for name in
                                   ("L3_predict", "L3", "L3_prefixes"))
    outside = decide(Question("equivalent", (predict, language), ("A", "B")), 10)
    assert outside.counterexample.tokens == ("b", "a")
    inside = decide(Question("equivalent", (predict, language), ("A", "B"), prefixes), 10,
                    unbounded=True)
    assert inside.outcome == "proved"


def prefix_of_the_language(language, tokens: tuple[str, ...]) -> bool:
    """A nonempty prefix of a string of the language, by the language's oracle: some
    alternating completion (a b a ... or b a b ..., at most k + 1 letters; one that finishes
    every block exists whenever any completion does) is in the language."""
    if not tokens or not set(tokens) <= set(language.alphabet):
        return False
    tails = [tuple("ab"[(start + i) % 2] for i in range(size))
             for start in (0, 1) for size in range(language_k(language) + 2)]
    return any(language.contains(list(tokens) + list(tail)) for tail in tails)


def language_k(language) -> int:
    return int(language.name[1:])


@pytest.mark.parametrize("family,k", [(f, k) for f in "LE" for k in SHIPPED_PREDICTION])
def test_the_prefix_programs_accept_exactly_the_prefixes_of_the_languages_strings(family, k):
    language = get_language(f"{family}{k}")
    path = crasp.example(f"{family}{k}_prefixes")
    domain = crasp.load_program(path)
    assert crasp.depth_of(domain) == max(k, 2)
    alphabet = tuple(language.alphabet) + ("?",)
    length = 7 if family == "L" else 5
    strings = [s for n in range(length + 1) for s in itertools.product(alphabet, repeat=n)]
    accepted = crasp.evaluate(domain, [list(s) for s in strings]).accept
    wrong = [s for s, a in zip(strings, accepted)
             if bool(a) != prefix_of_the_language(language, s)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("family,k", [(f, k) for f in "LE" for k in SHIPPED_PREDICTION])
def test_each_prediction_program_is_proved_to_solve_its_task(family, k):
    """Knee-Deep's witnesses (cor:prediction_task_depth for L_k, B_{k-1} for E_k) solve the
    task: equal to the language's program on every prefix of every length (k-induction,
    the domain assumed at every position: it is prefix-closed). Without the domain they
    differ, on a string outside the task."""
    names = (f"{family}{k}_predict", f"{family}{k}", f"{family}{k}_prefixes")
    if k > 6:   # no recognition file beyond L6/E6: generate it
        from crasp.languages.programs import recognition_program
        predict, prefixes = (crasp.load_program(crasp.example(n)) for n in names[::2])
        language = crasp.parse_program(recognition_program(k, family == "E"))
    else:
        predict, language, prefixes = (crasp.load_program(crasp.example(n)) for n in names)
    on_the_task = decide(Question("equivalent", (predict, language), ("A", "B"), prefixes),
                         12, unbounded=True, deepen=0)
    assert on_the_task.outcome == "proved"
    everywhere = decide(Question("equivalent", (predict, language), ("A", "B")), 12)
    assert everywhere.outcome == "counterexample"
    assert not prefix_of_the_language(get_language(f"{family}{k}"),
                                      everywhere.counterexample.tokens)


OTHER_PREFIXES = [name for name, language in LANGUAGES.items()
                  if language.prefixes_program is not None and name[0] not in "LE"]
PREFIX_LENGTHS = {2: (5, 12), 3: (3, 9)}
"""By alphabet size: the strings checked (up to this many tokens) and the members whose
prefixes they are checked against (up to this many: every prefix of the checked length
completes within it, a^3 to a^3 b^3 c^3 and b^5 to b^5 a^6 the longest)."""


@pytest.mark.parametrize("name", OTHER_PREFIXES)
def test_every_other_prefix_program_accepts_exactly_the_prefixes_of_the_strings(name):
    """The classic and sparse-memory languages' prefix programs against the prefixes of every
    string of the language up to the members' length (the oracle on every string), on every
    string with a foreign token as well; each is recognized as prefix-closed."""
    language = get_language(name)
    domain = crasp.parse_program(language.prefixes_program.source)
    assert is_prefix_closed(domain)
    checked, members = PREFIX_LENGTHS[len(language.alphabet)]
    prefixes = {member[:end] for n in range(members + 1)
                for member in itertools.product(language.alphabet, repeat=n)
                if language.contains(list(member)) for end in range(1, n + 1)}
    strings = [s for n in range(checked + 1)
               for s in itertools.product(tuple(language.alphabet) + ("?",), repeat=n)]
    accepted = crasp.evaluate(domain, [list(s) for s in strings]).accept
    wrong = [s for s, a in zip(strings, accepted) if bool(a) != (s in prefixes)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("name", [name for name in OTHER_PREFIXES
                                  if LANGUAGES[name].prediction_program
                                  is not LANGUAGES[name].program])
def test_the_classic_prediction_programs_are_proved_on_their_tasks(name):
    """The depth-1 prediction programs of Dyck-1, D_2, a^n b^n and a^n b^n c^n equal the
    (depth-2) language programs on every prefix of every length, and differ off the task."""
    language = LANGUAGES[name]
    predict, own, prefixes = (crasp.parse_program(reference.source) for reference in
                              (language.prediction_program, language.program,
                               language.prefixes_program))
    on_the_task = decide(Question("equivalent", (predict, own), ("A", "B"), prefixes), 12,
                         unbounded=True, deepen=0)
    assert on_the_task.outcome == "proved"
    assert decide(Question("equivalent", (predict, own), ("A", "B")), 12).outcome == \
        "counterexample"


def invoke(*arguments):
    return CliRunner().invoke(cli, [str(a) for a in arguments])


def test_equiv_domain_on_the_command_line():
    predict, language, prefixes = (crasp.example(n) for n in ("L3_predict", "L3", "L3_prefixes"))
    result = invoke("equiv", predict, language, "--domain", prefixes, "--unbounded")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("proved: ")
    assert f"for every string of every length that {prefixes} accepts" in result.output
    result = invoke("equiv", predict, language, "--json")
    assert result.exit_code == 1 and json.loads(result.output)["domain"] is None


def test_check_domain_gives_a_witness_the_domain_accepts():
    language, prefixes = (crasp.example(n) for n in ("L3", "L3_prefixes"))
    result = invoke("check", language, "--universal", "--domain", prefixes, "--json")
    assert result.exit_code == 1, result.output
    verdict = json.loads(result.output)
    assert verdict["domain"] == str(prefixes)
    assert verdict["counterexample"]["tokens"] == ["a"]
    assert verdict["counterexample"]["answers"] == [False, True]   # PROG, then DOMAIN
    result = invoke("check", language, "--empty", "--domain", prefixes)
    assert result.exit_code == 1
    assert "shortest witness: aba (length 3)" in result.output
    assert f"  DOMAIN {prefixes} answers True" in result.output


def test_the_domain_and_a_program_cannot_both_come_from_stdin():
    result = CliRunner().invoke(cli, ["equiv", "-", str(crasp.example("L3")), "--domain", "-"],
                                input='x = "a"\n')
    assert result.exit_code == 2
    assert "only one program can be read from stdin" in result.output


def test_a_domain_with_a_syntax_error_is_reported_with_its_place(tmp_path):
    broken = tmp_path / "broken.crasp"
    broken.write_text('x = #"a" >=\n')
    result = invoke("equiv", crasp.example("L3"), crasp.example("L3"), "--domain", broken)
    assert result.exit_code == 2
    assert f"{broken}:1:" in result.output and "Traceback" not in result.output
