"""One home for controls and for option labels: a page keeps no bound, option list or label map.

Every URL parameter a page takes is declared once, as a ``Control`` in its lesson's ``CONTROLS``
(the frame's ``lang`` and ``present`` aside), and no page or ``ui`` module writes a bound or an
option list of its own. Every option a lesson declares has a label in both languages, and every
label table belongs to a lesson.
"""

import ast
import importlib
import json
import pkgutil
from pathlib import Path

import pytest
from apptest_util import run_page

from ui.registry import PAGES
from visattn import lecture, lessons
from visattn.controls import Control, table

ROOT = Path(__file__).resolve().parent.parent
FRAME_KEYS = {"lang", "present"} | set(lecture.CONTROLS)  # the frame binds these on every page
LESSON_PAGES = [p for p in PAGES if p.lesson is not None]
LOCALES = ROOT / "ui" / "locales"


def controls_of(page) -> dict:
    return importlib.import_module(page.lesson).CONTROLS


# What declares controls or label tables besides the lessons: the lecture's parameters (every page
# takes them) and the reading selector's (several lessons add them)
SHARED_CONTROLS = ("visattn.lecture", "visattn.reading_selector")


def lesson_modules():
    """Every module of ``visattn.lessons`` (the pages' lessons) and what they share."""
    for info in pkgutil.iter_modules(lessons.__path__):
        yield importlib.import_module(f"visattn.lessons.{info.name}")
    for name in SHARED_CONTROLS:
        yield importlib.import_module(name)


def declared_tables() -> dict[str, set[str]]:
    """{table: option values as str} of every lesson module: its controls' tables and its
    ``LABELS``."""
    out: dict[str, set[str]] = {}
    for lesson in lesson_modules():
        controls = getattr(lesson, "CONTROLS", {})
        pairs = [(c.labels, c.options) for c in controls.values() if c.labels]
        pairs += list(getattr(lesson, "LABELS", {}).items())
        for name, values in pairs:
            out.setdefault(name, set()).update(str(v) for v in values)
    return out


def locale_tables(lang: str) -> dict[str, set[str]]:
    out = {}
    for f in sorted((LOCALES / lang).glob("*.json")):
        for k, v in json.loads(f.read_text(encoding="utf-8")).items():
            if isinstance(v, dict):
                out[f"{f.stem}.{k}"] = set(v)
    return out


@pytest.mark.parametrize("page", LESSON_PAGES, ids=[p.id for p in LESSON_PAGES])
def test_every_parameter_is_declared_in_the_lesson(page):
    at = run_page(page.id)
    accepted = set(at.session_state["_url_registry"]) - FRAME_KEYS
    declared = controls_of(page)
    assert accepted == set(declared), (
        f"bound but not declared: {sorted(accepted - set(declared))}; "
        f"declared but not bound: {sorted(set(declared) - accepted)}"
    )


def test_no_parameter_is_declared_by_two_lessons():
    seen: dict[str, str] = {}
    for page in LESSON_PAGES:
        for key in controls_of(page):
            assert key not in seen, f"{key} is declared by {seen[key]} and {page.lesson}"
            seen[key] = page.lesson


def test_a_table_refuses_a_key_twice():
    with pytest.raises(ValueError, match="twice"):
        table(Control("a", 1), [Control("b", 2), Control("a", 3)])


def test_a_control_refuses_a_default_it_does_not_allow():
    with pytest.raises(ValueError):
        Control("a", 5, lo=0, hi=4)
    with pytest.raises(ValueError):
        Control("a", "x", options=("y", "z"))


BOUND_WORDS = {"min_value", "max_value", "options", "max_chars", "lo", "hi"}
GLUE = sorted((ROOT / "pages").glob("**/*.py")) + [ROOT / "app.py"]


@pytest.mark.parametrize("path", GLUE, ids=[p.name for p in GLUE])
def test_pages_write_no_bound_and_bind_through_the_lesson(path):
    """A page passes no literal bound, option list or length to a widget and binds no key
    itself."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if name in ("bind", "bind_all"):
            bad.append(f"{path.name}:{node.lineno} {name}(…)")
        for kw in node.keywords:
            if kw.arg in BOUND_WORDS and isinstance(kw.value, ast.Constant | ast.List | ast.Tuple):
                bad.append(f"{path.name}:{node.lineno} {kw.arg}=literal")
    assert not bad, bad


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_declared_option_has_a_label(lang):
    have = locale_tables(lang)
    for name, values in declared_tables().items():
        assert name in have, f"no {lang} table {name}"
        assert values == have[name], (
            f"{lang} {name}: no label for {sorted(values - have[name])}; "
            f"labels of no option: {sorted(have[name] - values)}"
        )


def test_every_label_table_belongs_to_a_lesson():
    unused = set(locale_tables("en")) - set(declared_tables())
    assert not unused, f"label tables no lesson declares: {sorted(unused)}"
