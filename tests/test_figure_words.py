"""Figures name their own words: each figure module that shows words declares them as a
frozen ``Words`` dataclass with English defaults, and the locale namespace ``figures_<module>``
holds every field in English and Chinese, keyed by field name, nothing else (ui.i18n.figure_words
fills one from it). The English file says what the defaults say, so the two cannot drift; a
builder called without words (a notebook) speaks English."""

import dataclasses
import importlib
import json
import pkgutil
from pathlib import Path

import pytest

from ui.i18n import _figure_words, words_namespace
from visattn import figures

LOCALES = Path(__file__).resolve().parent.parent / "ui" / "locales"


def words_classes() -> list[type]:
    found = []
    for info in pkgutil.iter_modules(figures.__path__):
        module = importlib.import_module(f"visattn.figures.{info.name}")
        if isinstance(getattr(module, "Words", None), type):
            found.append(module.Words)
    return found


WORDS = words_classes()


def table(lang: str, words_class: type) -> dict:
    path = LOCALES / lang / f"{words_namespace(words_class)}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_scan_finds_the_figure_modules():
    assert len(WORDS) >= 1
    assert {w.__module__ for w in WORDS} >= {"visattn.figures.modern_attention"}


@pytest.mark.parametrize("words_class", WORDS, ids=[w.__module__ for w in WORDS])
def test_words_are_frozen_hashable_text(words_class):
    assert dataclasses.is_dataclass(words_class)
    assert words_class.__dataclass_params__.frozen
    defaults = words_class()
    hash(defaults)  # a cached figure's key
    for field in dataclasses.fields(words_class):
        assert isinstance(getattr(defaults, field.name), str), field.name


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("words_class", WORDS, ids=[w.__module__ for w in WORDS])
def test_every_field_has_a_text_and_every_text_a_field(words_class, lang):
    names = {field.name for field in dataclasses.fields(words_class)}
    have = set(table(lang, words_class))
    assert have == names, (
        f"{lang} {words_namespace(words_class)}: no text for {sorted(names - have)}; "
        f"texts of no field: {sorted(have - names)}"
    )


@pytest.mark.parametrize("words_class", WORDS, ids=[w.__module__ for w in WORDS])
def test_the_english_texts_are_the_defaults(words_class):
    assert table("en", words_class) == dataclasses.asdict(words_class())


@pytest.mark.parametrize("words_class", WORDS, ids=[w.__module__ for w in WORDS])
def test_filled_in_chinese(words_class):
    chinese = _figure_words(words_class, "zh")
    assert chinese != words_class() and chinese == _figure_words(words_class, "zh")
    assert dataclasses.asdict(chinese) == table("zh", words_class)


def test_every_word_namespace_belongs_to_a_figure_module():
    namespaces = {p.stem for p in (LOCALES / "en").glob("figures_*.json")}
    assert namespaces == {words_namespace(w) for w in WORDS}
