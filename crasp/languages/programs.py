"""Program text for the L_k and E_k families, for any k, and the reference programs that ship
as package data in ``crasp/programs/`` (the L_k and E_k files there are these texts; the
repository's ``examples/`` holds identical copies, checked by the tests).

Recognition (Knee-Deep, lem:piecewise_testable): L_k = A_k && !B_k, where A_k holds iff the
string contains the alternating word a b a ... of length k as a subsequence and B_k the same
for b a b ...; the chain P_1 = Q_x, P_{m+1} = Q_y && #P_m >= 1 (consecutive letters differ, so
non-strict counts are exact) gives depth k. The same program over {a, b, e} recognizes E_k:
e never matches a pattern letter, so the subsequence tests skip it.

Prediction: L_k uses B_{k-2} && Q_{sigma_k} (cor:prediction_task_depth, depth k - 2); E_k
uses B_{k-1} (depth k - 1; see ``blocks.neutral_prediction_depth``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from crasp import PROGRAMS_DIR
from crasp.util.atomic import write_text_atomic
from crasp.languages.blocks import block_letters, blocks_prediction_depth, neutral_prediction_depth


SHIPPED_RECOGNITION = range(1, 7)
"""k of the shipped files programs/L{k}.crasp and programs/E{k}.crasp."""
SHIPPED_PREDICTION = range(3, 9)
"""k of the shipped files programs/L{k}_predict.crasp and programs/E{k}_predict.crasp, and of
their domains programs/L{k}_prefixes.crasp and programs/E{k}_prefixes.crasp."""


def program_path(file_name: str) -> Path:
    """The installed reference program ``file_name``.

    >>> program_path("dyck1.crasp").name
    'dyck1.crasp'
    """
    return PROGRAMS_DIR / file_name


def _chain(prefix: str, first: str, k: int) -> list[str]:
    """P1 = "x"; P2 = "y" && #P1 >= 1; ...: P_m holds where a subsequence x y x ... of length m
    ends."""
    if k < 1:
        return []
    letters = [first, "b" if first == "a" else "a"]
    lines = [f'{prefix}1 = "{first}"']
    lines += [f'{prefix}{m} = "{letters[(m - 1) % 2]}" && #{prefix}{m - 1} >= 1'
              for m in range(2, k + 1)]
    return lines


def _alphabet_line(neutral: bool) -> str:
    return 'alphabet "a" "b" "e"' if neutral else 'alphabet "a" "b"'


def recognition_program(k: int, neutral: bool = False) -> str:
    """The depth-k program of L_k (or of E_k when ``neutral``)."""
    name = f"E{k}" if neutral else f"L{k}"
    if neutral:
        header = [
            f"// language: E_{k}: L_{k} with a neutral letter e inserted anywhere: the strings "
            "over a, b, e",
            f"// whose e-deleted string has exactly {k} nonempty alternating "
            f"block{'s' if k > 1 else ''}, starting with a",
            f"// depth: {k}",
            "// E_k = A_k && !B_k: A_k holds iff the string contains the alternating word",
            "// a b a ... of length k as a subsequence, B_k the same for b a b ...; e never",
            f"// matches a pattern letter, so it is skipped. A{k}/B{k} below hold at a position",
            "// that completes such a subsequence there. Knee-Deep v3,",
            "// thm:tlclpos_depth_hierarchy: E_k needs depth k even with RoPE or ALiBi.",
        ]
    else:
        header = [
            f"// language: L_{k} = {block_letters(k).replace(' ', '+ ')}+: exactly {k} nonempty "
            f"alternating block{'s' if k > 1 else ''}, starting with a",
            f"// depth: {k}",
            "// L_k = A_k && !B_k (Knee-Deep, lem:piecewise_testable): A_k holds iff the string "
            "contains",
            "// the alternating word a b a ... of length k as a subsequence, B_k the same for "
            "b a b ...;",
            f"// A{k}/B{k} below hold at a position that completes such a subsequence there.",
        ]
    body = [_alphabet_line(neutral), *_chain("A", "a", k), *_chain("B", "b", k),
            f"{name} = #A{k} >= 1 && !(#B{k} >= 1)"]
    return "\n".join(header + body) + "\n"


def prediction_program(k: int, neutral: bool = False) -> str:
    """The program that solves the prediction task of L_k (depth max(k-2, 0)) or of E_k
    (depth 1 for k = 1, k - 1 otherwise)."""
    return _neutral_prediction(k) if neutral else _blocks_prediction(k)


def _blocks_prediction(k: int) -> str:
    last = "ab"[(k - 1) % 2]  # sigma_k: the letter of the k-th block
    depth = blocks_prediction_depth(k)
    header = [
        f"// language: L_{k} prediction: at position i, whether the prefix up to i of a string "
        f"of L_{k} is in L_{k}",
        f"// depth: {depth}",
    ]
    if k >= 3:
        header += [
            f"// Knee-Deep, cor:prediction_task_depth: B_{k - 2} && Q_{last}. A prefix of a "
            f"string of L_{k} starts with a",
            f"// and has j <= {k} blocks; it contains b a b ... ({k - 2} letters) iff j >= "
            f"{k - 1}, and then it ends in",
            f'// "{last}" iff j = {k}. Only prefixes of strings of L_{k} are specified '
            "(the prediction task).",
        ]
        answer = f'predict_L{k} = #B{k - 2} >= 1 && "{last}"'
    else:
        header += [
            f"// A prefix of a string of L_{k} starts with a and has j <= {k} blocks; it is in "
            f'L_{k} iff j = {k},',
            f'// that is iff it ends in "{last}". Only prefixes of strings of L_{k} are '
            "specified (the prediction task).",
        ]
        answer = f'predict_L{k} = "{last}"'
    return "\n".join(header + [_alphabet_line(False), *_chain("B", "b", k - 2), answer]) + "\n"


def _neutral_prediction(k: int) -> str:
    depth = neutral_prediction_depth(k)
    header = [
        f"// language: E_{k} prediction: at position i, whether the prefix up to i of a string "
        f"of E_{k} is in E_{k}",
        f"// depth: {depth}",
    ]
    if k >= 2:
        header += [
            f"// B_{k - 1}: a prefix of a string of E_{k}, e's deleted, is empty or starts with "
            f"a and has j <= {k} blocks;",
            f"// it contains b a b ... ({k - 1} letters) iff j >= {k}. L_k's trick "
            "(B_{k-2} && the last letter)",
            "// fails here: the last token may be e, which hides the last letter. Only prefixes "
            f"of strings of E_{k}",
            "// are specified (the prediction task).",
        ]
        chain, answer = _chain("B", "b", k - 1), f"predict_E{k} = #B{k - 1} >= 1"
    else:
        header += [
            "// A prefix of a string of E_1 is in E_1 iff it contains an a (it may be all e's).",
        ]
        chain, answer = _chain("A", "a", 1), "predict_E1 = #A1 >= 1"
    return "\n".join(header + [_alphabet_line(True), *chain, answer]) + "\n"


def prefixes_program(k: int, neutral: bool = False) -> str:
    """The program that accepts exactly the nonempty prefixes of the strings of L_k (of E_k
    when ``neutral``): the strings on which its prediction task is specified (Knee-Deep,
    def:prediction_task: every prefix w[1..i], 1 <= i <= |w|, of a string w of the language).
    For ``crasp equiv --domain``: a program that solves the task is one equivalent to the
    language's program on these strings.

    Derivation. A nonempty string over {a, b} is a prefix of a string of L_k iff it starts
    with a and has j <= k blocks (append the letters of the missing blocks); a string that
    starts with a has j >= k + 1 blocks iff it contains b a b ... of length k as a
    subsequence, B_k. A nonempty string of a and b starts with a iff no b comes before its
    first a (a b with #"a" == 0 there). Over {a, b, e}, the same holds of the e-deleted
    string, which may be empty ("e" is a prefix of "e a ..."), and the pattern tests skip e.
    Any other token occurs in no string of the language (``other``). The empty input, which
    the task does not specify, is excluded by ``#true >= 1`` (at BOS every count is 0). Every
    conjunct, once false, stays false, so the program is prefix-closed as
    ``crasp.verify.closure`` recognizes it. Depth max(k, 2)."""
    name, letters = (f"E{k}", ("a", "b", "e")) if neutral else (f"L{k}", ("a", "b"))
    deleted, empty = (", e deleted," if neutral else "", "is empty or " if neutral else "")
    header = [
        f"// language: the nonempty prefixes of the strings of {name[0]}_{k}, where its "
        "prediction task is specified",
        f"// depth: {max(k, 2)}",
        f"// A prefix of a string of {name[0]}_{k}{deleted} {empty}starts with a and has "
        f"j <= {k} blocks;",
        f"// it contains b a b ... ({k} letters) iff j >= {k + 1}. For crasp equiv --domain: "
        "a program",
        f"// solves the prediction task iff it is equivalent to {name}_predict.crasp on these "
        "strings.",
    ]
    body = [
        _alphabet_line(neutral),
        "other = !(" + " || ".join(f'"{letter}"' for letter in letters) + ")",
        'b_first = "b" && #"a" == 0',
        *_chain("B", "b", k),
        f"{name}_prefix = #true >= 1 && #other == 0 && #b_first == 0 && !(#B{k} >= 1)",
    ]
    return "\n".join(header + body) + "\n"


def shipped_programs() -> Iterable[tuple[str, str]]:
    """(file name, text) of every shipped L_k and E_k program."""
    for neutral, family in ((False, "L"), (True, "E")):
        for k in SHIPPED_RECOGNITION:
            yield f"{family}{k}.crasp", recognition_program(k, neutral)
        for k in SHIPPED_PREDICTION:
            yield f"{family}{k}_predict.crasp", prediction_program(k, neutral)
            yield f"{family}{k}_prefixes.crasp", prefixes_program(k, neutral)


def write_programs(directory: str | Path, families: str = "LE") -> list[Path]:
    """Write the shipped L_k / E_k programs of the given families into ``directory`` (a
    maintainer refreshes ``crasp/programs`` and ``examples`` in a checkout this way).

    >>> import tempfile
    >>> len(write_programs(tempfile.mkdtemp(), families="L"))
    18
    """
    written = []
    for file_name, text in shipped_programs():
        if file_name[0] in families:
            path = Path(directory) / file_name
            write_text_atomic(path, text)
            written.append(path)
    return written
