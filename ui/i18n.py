"""User-visible text from the locale files ``ui/locales/<lang>/<namespace>.json``.

``t("kernel_regression.title")`` looks up key ``title`` in namespace ``kernel_regression`` for the
current language. Keys are always string literals in the code (a test reads them and fails on a key
no code uses, or a used key missing in a language); a choice among options maps each option to its
literal key. With ``VISATTN_STRICT_I18N=1`` (set by the tests) a missing key or placeholder raises;
in production it is logged and the English text (or the key) is shown instead.

A figure module's words are its ``Words`` dataclass (English defaults); :func:`figure_words` fills
one in the page's language from the namespace of its module, ``figures_<module>.json``, keyed by
field name."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from functools import cache
from pathlib import Path
from typing import TypeVar

import streamlit as st

LOCALES = Path(__file__).parent / "locales"
LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT_LANG = "en"
_log = logging.getLogger(__name__)


def strict() -> bool:
    return os.environ.get("VISATTN_STRICT_I18N") == "1"


@cache
def _entries(lang: str) -> dict[str, str | dict[str, str]]:
    """Everything of one language as {"namespace.key": text or table}."""
    out = {}
    for f in sorted((LOCALES / lang).glob("*.json")):
        for k, v in json.loads(f.read_text(encoding="utf-8")).items():
            out[f"{f.stem}.{k}"] = v
    return out


@cache
def catalogue(lang: str) -> dict[str, str]:
    """All strings of one language as {"namespace.key": text}."""
    return {k: v for k, v in _entries(lang).items() if isinstance(v, str)}


@cache
def tables(lang: str) -> dict[str, dict[str, str]]:
    """All label tables of one language as {"namespace.table": {option value: label}}."""
    return {k: v for k, v in _entries(lang).items() if isinstance(v, dict)}


def browser_lang() -> str:
    """zh when the browser asks for Chinese, else English."""
    try:
        loc = st.context.locale or ""
    except Exception:  # no browser behind this run (AppTest, bare mode)
        loc = ""
    return "zh" if str(loc).lower().startswith("zh") else DEFAULT_LANG


def lang() -> str:
    value = st.session_state.get("lang")
    return value if value in LANGUAGES else DEFAULT_LANG


def has(key: str) -> bool:
    """Whether ``key`` exists (for optional texts, such as the translation of an argument name)."""
    return key in catalogue(lang())


def label(table: str, value, **fmt) -> str:
    """The label of option ``value`` (looked up by ``str(value)``) in the locale table ``table``."""
    entry = tables(lang()).get(table, {}).get(str(value))
    if entry is None:
        if strict():
            raise KeyError(f"no label for {value!r} in {table!r} ({lang()!r})")
        _log.warning("no label for %r in %r (%r)", value, table, lang())
        entry = tables(DEFAULT_LANG).get(table, {}).get(str(value)) or str(value)
    return _filled(table, entry, fmt)


def label_table(name: str) -> dict[str, str]:
    """A whole label table in the current language (English where this language has none)."""
    return tables(lang()).get(name) or tables(DEFAULT_LANG)[name]


def labeller(table: str):
    """A ``format_func`` for a widget whose options are labelled by ``table``."""

    def format_option(value) -> str:
        return label(table, value)

    return format_option


W = TypeVar("W")


def words_namespace(words_class: type) -> str:
    """The locale namespace of a figure module's ``Words``: ``figures_<the module's name>``."""
    return "figures_" + words_class.__module__.rsplit(".", 1)[-1]


def figure_words(words_class: type[W]) -> W:
    """``words_class`` (a figure module's ``Words``) in the page's language: one object per
    language, hashable, so cached figures are built once per language."""
    return _figure_words(words_class, lang())


@cache
def _figure_words(words_class: type[W], language: str) -> W:
    namespace = words_namespace(words_class)
    texts = catalogue(language)
    filled = {}
    for field in dataclasses.fields(words_class):
        key = f"{namespace}.{field.name}"
        if key in texts:
            filled[field.name] = texts[key]
        elif strict():
            raise KeyError(f"no text for {key!r} in {language!r}")
        else:
            _log.warning("no text for %r in %r", key, language)
    return words_class(**filled)


def t(key: str, **fmt) -> str:
    """The text for ``key`` in the current language, its ``{placeholders}`` filled from ``fmt``."""
    text = catalogue(lang()).get(key)
    if text is None:
        if strict():
            raise KeyError(f"no text for {key!r} in {lang()!r}")
        _log.warning("no text for %r in %r", key, lang())
        text = catalogue(DEFAULT_LANG).get(key) or key
    return _filled(key, text, fmt)


def _filled(key: str, text: str, fmt: dict) -> str:
    """``text`` with its placeholders filled from ``fmt`` (unchanged when ``fmt`` is empty)."""
    if not fmt:
        return text
    try:
        return text.format(**fmt)
    except (KeyError, IndexError, ValueError):
        if strict():
            raise
        _log.warning("text %r does not fit %s", key, sorted(fmt))
        return text
