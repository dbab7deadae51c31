"""Pass: Verdict -> text or JSON, and the exit status (0 yes, 1 counterexample, 3 unknown)."""

from __future__ import annotations

from crasp.verify.closure import rejected_prefix
from crasp.verify.driver import Verdict
from crasp.verify.questions import mentioned_tokens, shown_string

EXIT_STATUS = {"holds": 0, "proved": 0, "counterexample": 1, "unknown": 3}

_YES = {
    "equivalent": "{A} and {B} are equivalent",
    "includes": "{A} includes {B} (every string {B} accepts, {A} accepts)",
    "empty": "{A} is empty (it accepts no string)",
    "universal": "{A} is universal (it accepts every string)",
    "prefix-closed": "{A} is prefix-closed (it accepts every nonempty prefix of every string "
                     "it accepts)",
}
_NO = {
    "equivalent": "not equivalent",
    "includes": "{A} does not include {B}: {B} accepts the string, {A} rejects it",
    "empty": "not empty: {A} accepts the string",
    "universal": "not universal: {A} rejects the string",
    "prefix-closed": "not prefix-closed: {A} accepts the string but not one of its prefixes",
}


def exit_status(verdict: Verdict) -> int:
    return EXIT_STATUS[verdict.outcome]


def _names(verdict: Verdict) -> dict[str, str]:
    files = [program.filename for program in verdict.question.programs]
    return {"A": files[0], "B": files[-1]}


def left_out_tokens(verdict: Verdict) -> list[str]:
    """The tokens the programs (the domain included) tell apart that the strings leave out:
    only an --alphabet can leave any out, and the answer then says nothing of strings with
    them."""
    return [token for token in mentioned_tokens(verdict.question.evaluated)
            if token not in verdict.alphabet]


def _alphabet_line(verdict: Verdict) -> str:
    line = "alphabet: " + " ".join(f'"{t}"' for t in verdict.alphabet)
    if verdict.foreign is not None:
        line += (f' ("{verdict.foreign}" stands for every token no program mentions; '
                 "--alphabet chooses the tokens)")
    left_out = left_out_tokens(verdict)
    if left_out:
        line += (" (leaves out " + " ".join(f'"{t}"' for t in left_out) + ", which the "
                 "programs tell apart: no string here has them)")
    return line


def _within(verdict: Verdict) -> str:
    """What restricts the strings: " that DOMAIN accepts", or nothing."""
    domain = verdict.question.domain
    return f" that {domain.filename} accepts" if domain is not None else ""


_CLOSURE = {
    "recognized": "is prefix-closed (recognized by its form): the solver assumes it everywhere",
    "proved": "is prefix-closed (proved: {detail}): the solver assumes it everywhere",
    "refuted": "is not prefix-closed ({detail}): the solver only filters by it",
    "unknown": "was not shown prefix-closed ({detail}): the solver only filters by it",
    "unchecked": "is not recognized as prefix-closed (--unbounded would try to prove it): the "
                 "solver only filters by it",
}


def _domain_line(verdict: Verdict) -> list[str]:
    """How the searches used the domain (docs/verification.md), or nothing without one."""
    closure = verdict.closure
    if closure is None:
        return []
    return [f"domain: {verdict.question.domain.filename} "
            + _CLOSURE[closure.status].format(detail=closure.detail)]


_VACUITY = {
    "vacuous": "warning: the answer is vacuous: {program} {detail}",
    "unknown": "warning: the answer may be vacuous: {program} {detail}",
}


def _vacuity_line(verdict: Verdict) -> list[str]:
    """A yes whose antecedent accepts no nonempty string, or may not (``crasp.verify.vacuity``);
    nothing when it has a witness."""
    vacuity = verdict.vacuity
    if vacuity is None or vacuity.status not in _VACUITY:
        return []
    return [_VACUITY[vacuity.status].format(program=vacuity.program, detail=vacuity.detail)]


def format_text(verdict: Verdict) -> str:
    names = _names(verdict)
    kind, n, within = verdict.question.kind, verdict.max_length, _within(verdict)
    method = ("z3 (linear integer arithmetic)" if verdict.method == "smt"
              else "enumeration (the interpreter on every string)")
    lines = []
    if verdict.outcome == "holds":
        lines.append(_YES[kind].format(**names) + f" for every string of length ≤ {n}"
                     + within)
    elif verdict.outcome == "proved":
        k = verdict.induction.k
        everywhere = " on every string, the domain left out" if verdict.without_domain else ""
        lines.append("proved: " + _YES[kind].format(**names) + " for every string of every "
                     f"length{within} (k-induction with k = {k}{everywhere}; base case: "
                     f"lengths ≤ {n})")
    elif verdict.outcome == "unknown":
        known = verdict.decided_length
        lines.append("unknown: " + (f"{_YES[kind].format(**names)} for every string of length "
                                    f"≤ {known}{within}, but " if known is not None else "")
                     + f"{verdict.reason} (see docs/verification.md)")
    else:
        lines += _counterexample_lines(verdict, names)
    lines.append(_alphabet_line(verdict))
    lines += _domain_line(verdict)
    lines += _vacuity_line(verdict)
    lines.append(f"method: {method}, {verdict.seconds:.2f} s")
    return "\n".join(lines)


def _counterexample_lines(verdict: Verdict, names: dict[str, str]) -> list[str]:
    example = verdict.counterexample
    shown = shown_string(example.tokens, verdict.alphabet)
    where = "at BOS" if example.position < 0 else f"at its last position {example.position}"
    noun = "counterexample" if verdict.question.kind == "equivalent" else "witness"
    which = (f"shortest {noun}" if verdict.shortest
             else f"{noun} (none has length ≤ {verdict.max_length})")
    lines = [_NO[verdict.question.kind].format(**names),
             f"{which}: {shown} (length {len(example.tokens)}), {where}"]
    for label, program, answer in zip(verdict.question.evaluated_labels,
                                      verdict.question.evaluated, example.answers):
        lines.append(f"  {label} {program.filename} answers {answer}")
    if verdict.question.kind == "prefix-closed":
        prefix = rejected_prefix(verdict.question.programs[0], example.tokens)
        lines.append(f"  its prefix {shown_string(prefix, verdict.alphabet)} (length "
                     f"{len(prefix)}) {names['A']} rejects")
    for difference in example.differences:
        line = f" (line {difference.line})" if difference.line else ""
        values = ", ".join(str(v) for v in difference.values)
        lines.append(f"  first definition of {difference.label} that the other program does not "
                     f"compute here: {difference.name}{line} = [{values}] (BOS, then each token)")
    return lines


def as_json(verdict: Verdict) -> dict:
    example = verdict.counterexample
    induction = verdict.induction
    shown = example.as_dict(shown_string(example.tokens, verdict.alphabet)) if example else None
    if example and verdict.question.kind == "prefix-closed":
        shown["rejected_prefix"] = list(rejected_prefix(verdict.question.programs[0],
                                                        example.tokens))
    return {
        "question": verdict.question.kind,
        "programs": [program.filename for program in verdict.question.programs],
        "domain": (verdict.question.domain.filename
                   if verdict.question.domain is not None else None),
        "domain_closure": ({"status": verdict.closure.status, "detail": verdict.closure.detail}
                           if verdict.closure is not None else None),
        "vacuity": ({"program": verdict.vacuity.program, "status": verdict.vacuity.status,
                     "detail": verdict.vacuity.detail,
                     "witness": (list(verdict.vacuity.witness)
                                 if verdict.vacuity.witness is not None else None)}
                    if verdict.vacuity is not None else None),
        "result": verdict.outcome,
        "max_length": verdict.max_length,
        "alphabet": list(verdict.alphabet),
        "left_out_tokens": left_out_tokens(verdict),
        "foreign_token": verdict.foreign,
        "method": verdict.method,
        "counterexample": shown,
        "shortest": verdict.shortest if example else None,
        "induction": ({"proved": induction.proved, "k": induction.k, "tried": induction.tried,
                       "exact": induction.exact, "without_domain": verdict.without_domain}
                      if induction else None),
        "seconds": round(verdict.seconds, 3),
        "reason": verdict.reason,
        "decided_length": verdict.decided_length,
        "timeout": verdict.timeout,
        "timed_out": verdict.timed_out,
        "max_memory": verdict.max_memory,
        "out_of_memory": verdict.out_of_memory,
    }
