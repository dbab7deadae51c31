"""Pass: Question x alphabet x N -> the shortest violating string, by an SMT solver.

Derivation. ``crasp.verify.encode`` turns each program's answer at position i of a symbolic
string into a term of linear integer arithmetic over the one-hot tokens t_0..t_i. Because the
answer at i is the acceptance of the prefix of length i + 1 (``crasp.verify.questions``), the
shortest violating string has length n exactly when

    V(n) = violation at position n - 1   is satisfiable   and   V(m) is not, for every m < n.

The solver is asked V(0) (BOS: no tokens), V(1), V(2), ... in order, on one incremental
solver: the string grows by one token per round, and a round that is unsatisfiable adds
``not V(n)`` as a *lemma* (it holds for every string, so adding it changes no answer, and it
spares the solver rediscovering that the shorter prefixes agree). The first satisfiable round
gives the shortest counterexample; its model's tokens are read off and returned. If every
round up to N is unsatisfiable, no string of length <= N violates.

Precondition: ``alphabet`` is non-empty. The caller re-runs the returned string through the
interpreter (``crasp.verify.explain``), so a solver answer is never reported unchecked.
"""

from __future__ import annotations

from crasp.errors import CraspError
from crasp.verify.encode import ParikhCounts, ProgramEncoder, one_hot_token
from crasp.verify.enumeration import Violation
from crasp.verify.questions import Question
from crasp.verify.solver import z3


def first_violation(question: Question, alphabet: tuple[str, ...],
                    max_length: int) -> Violation | None:
    """The shortest string of length <= ``max_length`` over ``alphabet`` on which the question
    is violated (found by z3), or None."""
    z = z3()
    solver = z.Solver()
    encoders = [ProgramEncoder(program, alphabet) for program in question.programs]
    at_bos = question.violation([encoder.bos()[p.answer.name]
                                 for encoder, p in zip(encoders, question.programs)])
    if z.is_true(z.simplify(at_bos)):
        return Violation(())
    tokens: list[list] = []
    parikh = ParikhCounts(solver, [z.IntVal(0)] * len(alphabet), 0, "n")
    for position in range(max_length):
        bits, exactly_one = one_hot_token(f"t{position}", len(alphabet))
        tokens.append(bits)
        solver.add(exactly_one)
        counts = parikh.advance(bits)
        violated = question.violation([encoder.step(bits, position, counts)[p.answer.name]
                                       for encoder, p in zip(encoders, question.programs)])
        solver.push()
        solver.add(violated)
        verdict = solver.check()
        if verdict == z.unknown:
            raise CraspError(f"z3 could not decide length {position + 1} "
                             f"({solver.reason_unknown()}); try --method enumerate")
        if verdict == z.sat:
            model = solver.model()
            return Violation(tuple(alphabet[_which(z, model, bits)] for bits in tokens))
        solver.pop()
        solver.add(z.Not(violated))
    return None


def _which(z, model, bits: list) -> int:
    """The index of the one-hot bit that holds in ``model``."""
    return next(k for k, bit in enumerate(bits)
                if z.is_true(model.evaluate(bit, model_completion=True)))
