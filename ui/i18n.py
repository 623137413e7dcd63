"""User-visible text from the locale files ``ui/locales/<lang>/<namespace>.json``.

``t("kernel.title")`` looks up key ``title`` in namespace ``kernel`` for the current language.
A test checks that every namespace has the same keys in every language.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import streamlit as st

LOCALES = Path(__file__).parent / "locales"
LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT_LANG = "en"


@cache
def catalogue(lang: str) -> dict[str, str]:
    """All strings of one language as {"namespace.key": text}."""
    out = {}
    for f in sorted((LOCALES / lang).glob("*.json")):
        for k, v in json.loads(f.read_text(encoding="utf-8")).items():
            out[f"{f.stem}.{k}"] = v
    return out


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


def t(key: str, **fmt) -> str:
    """The text for ``key`` in the current language (English if missing there; the key itself as a last resort)."""
    text = catalogue(lang()).get(key) or catalogue(DEFAULT_LANG).get(key) or key
    return text.format(**fmt) if fmt else text
