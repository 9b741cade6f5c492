"""The notebooks as lessons, held to their budgets: words, sentence length, figures per sentence, a
Details section collapsed on open, pictures, an exercise and a glossary, and no exploration history.

A sentence ends at '.', '!', '?', ':' or ';' before a capital letter, and at each list item;
headings and table rows are not sentences; a code span counts as one word. A figure is a decimal,
a percentage or a ratio (1.5, 44%, 6x), not an integer."""

import re
import statistics
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9]*.ipynb"))
WORDS = {"05_every_shape.ipynb": 2000, "06_decode.ipynb": 1880}  # every other notebook: 1,500
DETAILS_WORDS = 500
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:%|x\b)|(?<![\w.])\d+\.\d+")
HISTORY = re.compile(r"\bround ?\d+\b|tools/explore|\bfinal1\d\b|records? before|earlier record|exploration",
                     re.IGNORECASE)


def plain(markdown: str) -> str:
    text = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    text = re.sub(r"`[^`]*`", "CODE", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their words
    return re.sub(r"[*_]{1,2}(?=\S)|(?<=\S)[*_]{1,2}", "", text)


def sentences(markdown: str) -> list[str]:
    out, paragraph = [], []

    def flush():
        if paragraph:
            out.extend(re.split(r"(?<=[.!?:;])\s+(?=[A-Z])", " ".join(paragraph)))
            paragraph.clear()

    for line in plain(markdown).splitlines():
        s = line.strip()
        if not s or s.startswith(("#", "|")):
            flush()
            continue
        if re.match(r"([-*+]|\d+\.)\s", s):
            flush()
            s = re.sub(r"^([-*+]|\d+\.)\s+", "", s)
        paragraph.append(s)
    flush()
    return [s for s in out if s.split()]


def split(nb) -> tuple[list[str], list[str], list]:
    """(lesson markdown, Details markdown, the Details heading cells)."""
    lesson, details, heads, inside = [], [], [], False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        if re.match(r"#+\s+Details\b", cell.source):
            inside = True
            heads.append(cell)
        elif re.match(r"#{1,2}\s", cell.source) and inside:
            inside = False
        (details if inside else lesson).append(cell.source)
    return lesson, details, heads


def words(texts) -> int:
    return sum(len(plain(t).split()) for t in texts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_lesson_keeps_its_budgets(path):
    nb = nbformat.read(path, as_version=4)
    lesson, details, heads = split(nb)
    n = words(lesson)
    assert n <= WORDS.get(path.name, 1500), f"{n} words of lesson"
    said = [s for t in lesson for s in sentences(t)]
    lengths = [len(s.split()) for s in said]
    assert statistics.median(lengths) <= 20, statistics.median(lengths)
    long = [s for s in said if len(s.split()) > 40]
    assert not long, long[:3]
    crowded = [s for s in said if len(FIGURE.findall(s)) > 3]
    assert not crowded, crowded[:3]
    assert heads and words(details) <= DETAILS_WORDS, words(details)
    assert all(c.metadata.get("jp-MarkdownHeadingCollapsed") for c in heads), "Details must open collapsed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_exploration_history(path):
    nb = nbformat.read(path, as_version=4)
    found = [m.group(0) for c in nb.cells for m in HISTORY.finditer(c.source)]
    assert not found, found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_pictures_an_exercise_and_a_glossary(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    pictures = [c for c in code if re.search(r"\bpic\.\w+\(", c.source)]
    assert len(pictures) >= 3, "at least three pictures of ideas"
    images = sum(o.get("data", {}).get("image/png") is not None for c in code for o in c.get("outputs", []))
    assert images >= 3, "the pictures are stored"
    assert any("lab.try_kernel(" in c.source for c in code), "an exercise, tried with lab.try_kernel"
    assert any(re.match(r"#+\s+Glossary", c.source) for c in nb.cells if c.cell_type == "markdown")


def test_the_sentence_rules():
    text = "One `code span here` counts once. Two: Three; four stay\n- a list item\n| a | table |\n# A heading"
    assert sentences(text) == ["One CODE counts once.", "Two:", "Three; four stay", "a list item"]
    assert len(FIGURE.findall("1.5x and 44% and 6x but 2048 and 1,024")) == 3
