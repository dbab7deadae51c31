"""Names -> languages: L{k} and E{k} for every k >= 1, the classic counting languages, the
negative controls, the sparse-memory languages ``memory-FUNCTION-LAG-...`` for any lags, and
any program file (``prog.crasp``, ``prog.crasp@dyck1``)."""

from __future__ import annotations

import difflib
import re
from functools import partial

from crasp import PROGRAM_SUFFIXES
from crasp.errors import CraspError
from crasp.languages import blocks, controls, counting, sparse_memory
from crasp.languages.distributions import blocks_distributions, neutral_distributions
from crasp.languages.language import Language, Lengths, ReferenceProgram
from crasp.languages.programs import (SHIPPED_PREDICTION, SHIPPED_RECOGNITION, prediction_program,
                                      prefixes_program, program_path, recognition_program)

LISTED_K = range(1, 13)
"""The k of L_k and E_k listed in ``LANGUAGES`` (the paper trains L_3 .. L_12); every k >= 1
is available through ``get_language``."""


_FAMILY_PROGRAMS = {"recognition": ("", recognition_program, SHIPPED_RECOGNITION),
                    "prediction": ("_predict", prediction_program, SHIPPED_PREDICTION),
                    "prefixes": ("_prefixes", prefixes_program, SHIPPED_PREDICTION)}
"""Which program of L_k / E_k: (file name suffix, text maker, the k that ship as files)."""


def _family_program(k: int, neutral: bool, which: str) -> ReferenceProgram:
    suffix, make, shipped = _FAMILY_PROGRAMS[which]
    path = program_path(f"{'E' if neutral else 'L'}{k}{suffix}.crasp")
    return ReferenceProgram(path if k in shipped else None, make(k, neutral))


def blocks_language(k: int) -> Language:
    """L_k, with the paper's generator (uniform composition of the length into k blocks)."""
    return Language(
        name=f"L{k}", alphabet=("a", "b"),
        description=f"{k} nonempty alternating blocks starting with a "
                    f"({blocks.block_letters(k).replace(' ', '+ ')}+)",
        support_size=partial(blocks.blocks_support, k),
        sample_ids=lambda n, rng: blocks.sample_blocks(k, n, rng),
        oracle=partial(blocks.blocks_oracle, k), labeller=partial(blocks.blocks_labels, k),
        lengths=Lengths(k), expressible=True, recognition_depth=k,
        prediction_depth=blocks.blocks_prediction_depth(k),
        program=_family_program(k, neutral=False, which="recognition"),
        prediction_program=_family_program(k, neutral=False, which="prediction"),
        prefixes_program=_family_program(k, neutral=False, which="prefixes"),
        distributions=blocks_distributions(k),
        note="Knee-Deep's hierarchy family: recognition depth k (thm:TLCl_depth), prediction "
             "depth k - 2 for k >= 3 (cor:prediction_task_depth)")


def neutral_language(k: int, rate: float = blocks.DEFAULT_INSERTION_RATE) -> Language:
    """E_k: each position holds the neutral letter e with probability ``rate``."""
    if not 0 <= rate < 1:
        raise CraspError(f"E{k}: the insertion rate must be in [0, 1), not {rate:g}")
    name = f"E{k}" if rate == blocks.DEFAULT_INSERTION_RATE else f"E{k}@{rate:g}"
    return Language(
        name=name, alphabet=("a", "b", "e"),
        description=f"L{k} with a neutral letter e anywhere (insertion rate {rate:g})",
        support_size=partial(blocks.neutral_support, k, rate),
        sample_ids=lambda n, rng: blocks.sample_neutral(k, rate, n, rng),
        oracle=partial(blocks.neutral_oracle, k), labeller=partial(blocks.neutral_labels, k),
        lengths=Lengths(k), expressible=True, recognition_depth=k,
        prediction_depth=blocks.neutral_prediction_depth(k),
        program=_family_program(k, neutral=True, which="recognition"),
        prediction_program=_family_program(k, neutral=True, which="prediction"),
        prefixes_program=_family_program(k, neutral=True, which="prefixes"),
        distributions=neutral_distributions(k, rate),
        note="keeps the depth hierarchy under RoPE and ALiBi (Knee-Deep v3, "
             "thm:tlclpos_depth_hierarchy); prediction depth k - 1 is proved tight for k <= 3 "
             "and conjectured beyond (k - 2 is a proved lower bound)")


def _counting_language(name: str, alphabet: tuple[str, ...], description: str, support_size,
                       sample_ids, oracle, labeller, lengths: Lengths,
                       example: str) -> Language:
    recognition_depth, prediction_depth = counting.DEPTHS[name]
    program = ReferenceProgram(program_path(example))
    prediction_text = counting.PREDICTION_PROGRAMS.get(name)
    return Language(
        name=name, alphabet=alphabet, description=description, support_size=support_size,
        sample_ids=sample_ids, oracle=oracle, labeller=labeller, lengths=lengths,
        expressible=True, recognition_depth=recognition_depth,
        prediction_depth=prediction_depth, program=program,
        prediction_program=(program if prediction_text is None
                            else ReferenceProgram(None, prediction_text)),
        prefixes_program=ReferenceProgram(None, counting.PREFIXES_PROGRAMS[name]))


def _classic_languages() -> list[Language]:
    return [
        _counting_language(
            "dyck1", ("(", ")"), "balanced parentheses", counting.dyck_support,
            lambda n, rng: counting.sample_dyck(n, rng), counting.dyck_oracle,
            counting.dyck_labels, Lengths(0, 2), "dyck1.crasp"),
        _counting_language(
            "dyck2", ("(", ")"), "balanced parentheses nested at most 2 deep",
            counting.bounded_dyck2_support, counting.sample_bounded_dyck2,
            partial(counting.dyck_oracle, bound=2), partial(counting.dyck_labels, bound=2),
            Lengths(0, 2), "dyck2_bounded.crasp"),
        _counting_language(
            "anbn", ("a", "b"), "a^n b^n", partial(counting.equal_blocks_support, 2),
            partial(counting.sample_equal_blocks, 2), partial(counting.equal_blocks_oracle, 2),
            partial(counting.equal_blocks_labels, 2), Lengths(0, 2), "anbn.crasp"),
        _counting_language(
            "anbncn", ("a", "b", "c"), "a^n b^n c^n",
            partial(counting.equal_blocks_support, 3), partial(counting.sample_equal_blocks, 3),
            partial(counting.equal_blocks_oracle, 3), partial(counting.equal_blocks_labels, 3),
            Lengths(0, 3), "anbncn.crasp"),
        _counting_language(
            "majority", ("a", "b"), "more a than b", counting.majority_support,
            counting.sample_majority, counting.majority_oracle, counting.majority_labels,
            Lengths(1), "majority.crasp"),
        _counting_language(
            "contains_ab", ("a", "b"), "some a immediately followed by b",
            counting.contains_ab_support, counting.sample_contains_ab,
            counting.contains_ab_oracle, counting.contains_ab_labels, Lengths(2),
            "contains_ab.crasp"),
        Language(
            name="parity", alphabet=("a", "b"), description="an odd number of b",
            support_size=controls.parity_support, sample_ids=controls.sample_parity,
            oracle=controls.parity_oracle, labeller=controls.parity_labels,
            lengths=Lengths(1), expressible=False, recognition_depth=None,
            prediction_depth=None,
            note="negative control: not in C-RASP (Huang et al. 2025); a NoPE transformer is "
                 "not expected to length-generalize"),
        Language(
            name="aa_star", alphabet=("a", "b"), description="(aa)*: a's only, even length",
            support_size=controls.aa_star_support, sample_ids=controls.sample_aa_star,
            oracle=controls.aa_star_oracle, labeller=controls.aa_star_labels,
            lengths=Lengths(0, 2), expressible=False, recognition_depth=None,
            prediction_depth=None, program=ReferenceProgram(program_path("aa_star.crasp")),
            note="negative control: not in C-RASP (Huang et al. 2025); in C-RASP[periodic] at "
                 "depth 1, examples/aa_star.crasp (#import pos_even)"),
    ]


# ---------------------------------------------------------------------------- sparse memory

LISTED_MEMORY = [
    ("xor", sparse_memory.light_lags(3)), ("xor", sparse_memory.heavy_lags(3)),
    ("xor", sparse_memory.light_lags(4)), ("xor", sparse_memory.heavy_lags(4)),
    ("and", sparse_memory.heavy_lags(3)), ("or", sparse_memory.heavy_lags(3)),
]
"""The sparse-memory languages listed in ``LANGUAGES``: light-tailed (1..k) and heavy-tailed
(1, 2, 4, ..., 2^(k-1)) lag sets; every function and lag set is available by name."""


def memory_language(function: sparse_memory.MemoryFunction, lags: tuple[int, ...]) -> Language:
    """y_i = f(w_{i-t_1}, ..., w_{i-t_k}) (see ``crasp.languages.sparse_memory``)."""
    name = sparse_memory.memory_name(function.name, lags)
    program = ReferenceProgram(None, sparse_memory.memory_program(function, lags))
    reads = f" {function.name} ".join(f"w[i-{t}]" for t in lags)
    return Language(
        name=name, alphabet=("a", "b"),
        description=f"sparse memory: {reads} at the last position (b = 1, a = 0)",
        support_size=partial(sparse_memory.memory_support, function, lags),
        sample_ids=partial(sparse_memory.sample_memory, function, lags),
        oracle=partial(sparse_memory.memory_oracle, function, lags),
        labeller=partial(sparse_memory.memory_labels, function, lags),
        lengths=sparse_memory.lengths(function, lags), expressible=True,
        recognition_depth=1, prediction_depth=1, program=program, prediction_program=program,
        prefixes_program=ReferenceProgram(None, sparse_memory.memory_prefixes_program(
            function, lags)),
        note="fixed sparse memory (Wang & E 2024); the program needs the offset predicate "
             "(C-RASP with positions; compiled with ALiBi heads); a lag before the "
             "start reads a")


LANGUAGES: dict[str, Language] = {
    **{f"L{k}": blocks_language(k) for k in LISTED_K},
    **{f"E{k}": neutral_language(k) for k in LISTED_K},
    **{language.name: language for language in _classic_languages()},
    **{language.name: language for language in
       (memory_language(sparse_memory.FUNCTIONS[f], lags) for f, lags in LISTED_MEMORY)},
}
"""The listed languages, in table order."""

MAX_K = 100_000
"""The largest k of L_k and E_k built by name (L_100000's strings have 100,000 tokens at least;
a name like L99999999999999999999 would build a program of that many definitions)."""

_FAMILY = re.compile(r"(?P<family>[LE])(?P<k>\d+)(?:@(?P<rate>.+))?")


def get_language(name: str, dialect: str = "crasp") -> Language:
    """The language called ``name``; see the module docstring for the names. ``dialect`` says
    how a program file ``PROG.crasp`` is read (``crasp.parse_program``); names ignore it.

    >>> language = get_language("dyck1")
    >>> language.alphabet, language.recognition_depth, language.contains(list("(())"))
    (('(', ')'), 2, True)
    """
    name = str(name).strip()
    base, _, parameter = name.partition("@")
    if base.endswith(PROGRAM_SUFFIXES):
        from crasp.languages.program_language import program_language

        return program_language(name, get_language(parameter) if parameter else None, dialect)
    if name in LANGUAGES:
        return LANGUAGES[name]
    memory = sparse_memory.parse_memory_name(name)
    if memory is not None:
        return memory_language(*memory)
    match = _FAMILY.fullmatch(name)
    if match:
        k = int(match["k"])
        if not 1 <= k <= MAX_K:
            raise CraspError(f"{name}: k must be from 1 to {MAX_K:,}")
        if match["family"] == "L":
            if match["rate"] is not None:
                raise CraspError(f"{name}: only E_k takes a parameter (E{k}@RATE)")
            return blocks_language(k)
        try:
            rate = (blocks.DEFAULT_INSERTION_RATE if match["rate"] is None
                    else float(match["rate"]))
        except ValueError:
            raise CraspError(f"{name}: the insertion rate must be a number, like E{k}@0.3") \
                from None
        return neutral_language(k, rate)
    if "/" in base or "\\" in base:   # a path: a file it names must be a program file
        raise CraspError(f"{name!r} is a path but not a program file: a language read from a "
                         f"file must end in {' or '.join(PROGRAM_SUFFIXES)} (PROG.crasp, or "
                         f"PROG.crasp@NAME to draw its strings from NAME's generator)")
    by_lower = {known.lower(): known for known in LANGUAGES}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
    suggestion = f"did you mean {by_lower[close[0]]!r}? " if close else ""
    classic = (n for n in LANGUAGES if not _FAMILY.fullmatch(n) and not n.startswith("memory-"))
    raise CraspError(
        f"unknown language {name!r}; {suggestion}known: L{{k}}, E{{k}} and E{{k}}@RATE for "
        f"1 <= k <= {MAX_K:,}, {', '.join(classic)}, memory-FUNCTION-LAG-... (FUNCTION: "
        f"{', '.join(sparse_memory.FUNCTIONS)}; lags increasing, like memory-xor-1-2-4), or a "
        "program file PROG.crasp (PROG.crasp@NAME draws its strings from NAME's generator)")
