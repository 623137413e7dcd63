"""Every string the user sees exists in English and Chinese, with the same placeholders."""

import json
import re
import string
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "ui" / "locales"
NAMESPACES = sorted(p.stem for p in (LOCALES / "en").glob("*.json"))


def load(lang, ns):
    return json.loads((LOCALES / lang / f"{ns}.json").read_text(encoding="utf-8"))


def fields(text):
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_same_namespaces():
    assert NAMESPACES == sorted(p.stem for p in (LOCALES / "zh").glob("*.json"))


@pytest.mark.parametrize("ns", NAMESPACES)
def test_same_keys_and_placeholders(ns):
    en, zh = load("en", ns), load("zh", ns)
    assert set(en) == set(zh), f"only en: {set(en) - set(zh)}; only zh: {set(zh) - set(en)}"
    for k in en:
        assert fields(en[k]) == fields(zh[k]), k
        assert zh[k].strip(), f"{ns}.{k} is empty in Chinese"


def test_every_key_used_in_code_exists():
    keys = {f"{ns}.{k}" for ns in NAMESPACES for k in load("en", ns)}
    sources = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")]
    used = set()
    for f in sources:
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[A-Za-z0-9_]+)["']""", f.read_text(encoding="utf-8")))
    assert used, "no t() calls found: the scan is broken"
    assert used <= keys, f"keys used but missing from the locale files: {sorted(used - keys)}"


def test_chinese_files_are_chinese():
    for ns in NAMESPACES:
        text = "".join(load("zh", ns).values())
        assert re.search(r"[\u4e00-\u9fff]", text), ns
