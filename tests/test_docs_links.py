"""Every relative link in README.md and docs/ points at a file of the checkout, and every
``#anchor`` at a heading of the file it names (GitHub's rule: the heading in lower case,
punctuation other than ``-`` dropped, spaces as ``-``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parent.parent
DOCUMENTS = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").glob("**/*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_BLOCK = re.compile(r"```.*?```", re.S)


def anchor_of(heading: str) -> str:
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def anchors(document: Path) -> set[str]:
    text = CODE_BLOCK.sub("", document.read_text(encoding="utf-8"))
    return {anchor_of(heading) for heading in re.findall(r"^#+ (.*)$", text, re.M)}


def relative_links(document: Path) -> list[str]:
    text = CODE_BLOCK.sub("", document.read_text(encoding="utf-8"))
    return [target for target in LINK.findall(text)
            if not target.startswith(("http://", "https://", "mailto:"))]


def test_the_anchor_rule():
    assert anchor_of("Against a built-in language") == "against-a-built-in-language"
    assert anchor_of("On the strings a task specifies") == "on-the-strings-a-task-specifies"
    assert anchor_of("`crasp equiv`: A, B & C") == "crasp-equiv-a-b--c"


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(CHECKOUT))
                                                     for d in DOCUMENTS])
def test_every_relative_link_resolves(document):
    broken = []
    for target in relative_links(document):
        path, _, anchor = target.partition("#")
        linked = (document.parent / path) if path else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading")
    assert not broken, broken


def test_the_documents_link_somewhere():
    assert sum(len(relative_links(document)) for document in DOCUMENTS) > 150
