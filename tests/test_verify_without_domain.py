"""An inconclusive induction on a domain that is not assumed is tried again with the domain
left out (crasp.verify.driver._proved_without_domain): a question that holds on every string
holds on the domain's strings, and without the domain the step's hypothesis is stronger."""

from __future__ import annotations

import itertools

import numpy as np

import crasp
from crasp.verify import Question, decide
from crasp.verify import driver

AB = ("a", "b")
UPWARD = 'x = #"b" >= 1 && #"a" >= 2'   # accepts aab, not its prefix a: never assumed


def question(kind: str, program: str, domain: str = UPWARD) -> Question:
    return Question(kind, (crasp.parse_program(program),), ("PROG",),
                    crasp.parse_program(domain))


def test_a_property_of_every_string_is_proved_on_a_domain_that_is_not_prefix_closed():
    verdict = decide(question("prefix-closed", 'x = #"b" < 3'), 8, AB, unbounded=True)
    assert verdict.closure.status == "refuted"
    assert verdict.outcome == "proved" and verdict.without_domain and verdict.induction.k == 1
    for kind, program in [("universal", 'x = #"a" + #"b" == #true'),
                          ("empty", 'x = #"a" > #true')]:
        verdict = decide(question(kind, program), 8, AB, unbounded=True)
        assert verdict.outcome == "proved", verdict


def test_a_violation_outside_the_domain_proves_nothing_without_it():
    """``#"b" < 1`` is universal on the strings without b, violated by ``b``: the retry's
    own base case finds that, and the answer is whatever the domain's own attempt gave."""
    verdict = decide(question("universal", 'x = #"b" < 1', 'x = #"b" == 0 && #"a" >= 2'),
                     6, AB, unbounded=True)
    assert not verdict.without_domain


def test_the_retry_keeps_to_its_share_of_the_time(monkeypatch):
    monkeypatch.setattr(driver, "WITHOUT_DOMAIN_SECONDS", 1e-9)
    verdict = decide(question("prefix-closed", 'x = #"b" < 3'), 8, AB, unbounded=True)
    assert verdict.outcome == "unknown" and not verdict.without_domain


def reopens_anywhere(program: crasp.Program, max_length: int) -> bool:
    """The reference: on some string over AB of length <= max_length, the interpreter finds
    ``program`` true at the last token after false at an earlier one (no domain)."""
    for length in range(2, max_length + 1):
        strings = [list(s) for s in itertools.product(AB, repeat=length)]
        held = np.asarray(crasp.evaluate(program, strings).output[:, :length], dtype=bool)
        if (held[:, -1] & ~held[:, :-1].all(axis=1)).any():
            return True
    return False


def test_proofs_with_the_domain_left_out_hold_on_every_short_string():
    """Every sum of counts against a constant (closing below, ``<``; not, ``>=``) asked to
    be prefix-closed on the upward domains ``#"b" >= e1 && #"a" >= e2``, none prefix-closed:
    wherever the domain is left out the property holds on every string of up to 7 tokens,
    and the retry is what proves some of them."""
    fired = 0
    for a, b, c, op in itertools.product((0, 1), (1, 2), (2, 3), ("<", ">=")):
        program = crasp.parse_program(f'x = {a} * #"a" + {b} * #"b" {op} {c}')
        for e1, e2 in itertools.product((1, 2, 3), (1, 2)):
            domain = crasp.parse_program(f'x = #"b" >= {e1} && #"a" >= {e2}')
            verdict = decide(Question("prefix-closed", (program,), ("PROG",), domain), 6, AB,
                             unbounded=True)
            assert verdict.closure.status == "refuted"
            if verdict.without_domain:
                assert verdict.outcome == "proved" and op == "<"
                assert not reopens_anywhere(program, 7)
                fired += 1
            if op == "<":
                assert verdict.outcome == "proved", (a, b, c, e1, e2)
    assert fired >= 8
