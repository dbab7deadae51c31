"""Language library: L_k, E_k, the classic counting languages and negative controls, each with
a seeded generator, an oracle independent of the interpreter, prefix labels for the prediction
task and, where C-RASP expresses it, a reference program; and length-binned datasets.

    from crasp.languages import get_language, build_task, LANGUAGES
    lang = get_language("L5")
    task = build_task(lang, train_bin=(201, 250), test_bins=[(251, 300), "251:300@skewed"],
                      n_train=1000, n_test=1000, val_fraction=0.2, seed=0)
"""

from crasp.languages.datasets import (BinSpec, Split, Task, build_task, format_bin, parse_bin,
                                     parse_bins, parse_test_bin, parse_test_bins)
from crasp.languages.language import Language, ReferenceProgram
from crasp.languages.programs import prediction_program, recognition_program, write_programs
from crasp.languages.registry import LANGUAGES, get_language
from crasp.languages.storage import read_paper_bins, read_task, write_task

__all__ = [
    "BinSpec", "parse_test_bin", "parse_test_bins",
    "LANGUAGES", "Language", "ReferenceProgram", "Split", "Task", "build_task", "format_bin",
    "get_language", "parse_bin", "parse_bins", "prediction_program", "read_paper_bins",
    "read_task", "recognition_program", "write_programs", "write_task",
]
