"""Every string the user sees exists in English and Chinese, with the same placeholders; every key
is used.

Keys are string literals in the code (never built at run time), so reading the source finds them
all: a key no code names, or a named key missing from the locale files, fails here. Error messages
are keyed by the codes of :class:`visattn.errors.InputError`, read from the raise sites."""

import ast
import json
import re
import string
from pathlib import Path

import pytest

from ui.registry import PAGES

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "ui" / "locales"
NAMESPACES = sorted(p.stem for p in (LOCALES / "en").glob("*.json"))
APP_SOURCES = [
    ROOT / "app.py",
    *sorted(ROOT.glob("pages/**/*.py")),
    *sorted(ROOT.glob("ui/**/*.py")),
    *sorted(ROOT.glob("visattn/lessons/*.py")),  # they name their options' label tables
    # and so do the controls declared outside a lesson: the lecture's, the reading selector's
    ROOT / "visattn" / "lecture.py",
    ROOT / "visattn" / "reading_selector.py",
]
RAISE_SOURCES = [
    f
    for f in (*sorted(ROOT.glob("visattn/**/*.py")), *sorted(ROOT.glob("ui/**/*.py")))
    if f.name != "errors.py"
]
KEY = re.compile(r"(" + "|".join(NAMESPACES) + r")\.[A-Za-z0-9_]+")
# The one place a key is built from data: an InputError's code (and an argument name) →
# errors.<code>.
DYNAMIC_ALLOWED = {ROOT / "ui" / "errors.py"}


def load(lang, ns):
    return json.loads((LOCALES / lang / f"{ns}.json").read_text(encoding="utf-8"))


def catalogue(lang):
    """Every text of one language as {"ns.key": text}; a label table's entries as "ns.table[value]"
    (a table itself is named in code as "ns.table", like a key)."""
    out = {}
    for ns in NAMESPACES:
        for k, v in load(lang, ns).items():
            if isinstance(v, dict):
                out |= {f"{ns}.{k}[{value}]": text for value, text in v.items()}
            else:
                out[f"{ns}.{k}"] = v
    return out


def named(key):
    """The name code uses for a catalogue entry: the key, or a table entry's table."""
    return key.split("[", 1)[0]


def fields(text):
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def trees(files):
    return [(f, ast.parse(f.read_text(encoding="utf-8"))) for f in files]


def error_raises():
    """[(file, line, code, {param names})] for every ``InputError("code", …, **params)`` in visattn
    and ui."""
    out = []
    for f, tree in trees(RAISE_SOURCES):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "InputError":
                assert node.args and isinstance(node.args[0], ast.Constant), (
                    f"{f}:{node.lineno}: the code must be a literal"
                )
                out.append((f, node.lineno, node.args[0].value, {k.arg for k in node.keywords}))
    return out


def test_same_namespaces():
    assert NAMESPACES == sorted(p.stem for p in (LOCALES / "zh").glob("*.json"))


@pytest.mark.parametrize("ns", NAMESPACES)
def test_same_keys_and_placeholders(ns):
    en = {k: v for k, v in catalogue("en").items() if k.startswith(f"{ns}.")}
    zh = {k: v for k, v in catalogue("zh").items() if k.startswith(f"{ns}.")}
    assert set(en) == set(zh), f"only en: {set(en) - set(zh)}; only zh: {set(zh) - set(en)}"
    for k in en:
        assert fields(en[k]) == fields(zh[k]), k
        assert zh[k].strip(), f"{k} is empty in Chinese"


def test_keys_are_literals():
    """t(…) takes a literal key (or a name bound to literals); no f-string or concatenation builds
    one."""
    bad = []
    for f, tree in trees(APP_SOURCES):
        if f in DYNAMIC_ALLOWED:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args:
                if isinstance(node.args[0], (ast.JoinedStr, ast.BinOp)):
                    bad.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert not bad, f"keys built at run time (map each option to a literal key instead): {bad}"


def literal_keys():
    """Every string literal in the app's code that names a locale key."""
    found = set()
    for _, tree in trees(APP_SOURCES):
        parts = {
            id(c) for j in ast.walk(tree) if isinstance(j, ast.JoinedStr) for c in j.values
        }  # pieces of f-strings
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and KEY.fullmatch(node.value)
                and id(node) not in parts
            ):
                found.add(node.value)
    return found


def test_every_key_named_in_code_exists():
    keys = {named(k) for k in catalogue("en")}
    used = literal_keys()
    assert len(used) > 100, "the scan found almost no keys: it is broken"
    assert used <= keys, (
        f"keys named in code but missing from the locale files: {sorted(used - keys)}"
    )


def test_every_error_code_is_translated():
    raises = error_raises()
    assert len(raises) > 30, "the scan found almost no InputError: it is broken"
    for lang in ("en", "zh"):
        cat = catalogue(lang)
        for f, line, code, params in raises:
            key = f"errors.{code}"
            assert key in cat, f"{f.relative_to(ROOT)}:{line}: no {lang} text for {key}"
            assert fields(cat[key]) <= params, (
                f"{f.relative_to(ROOT)}:{line}: {key} needs {fields(cat[key]) - params}"
            )


def figure_word_keys() -> set[str]:
    """The keys the figures' ``Words`` fill themselves from (tests/test_figure_words checks them
    field by field)."""
    return {k for k in catalogue("en") if k.startswith("figures_")}


def registry_keys() -> set[str]:
    """The keys ``ui.registry`` derives from each page's id: its name in the navigation and its
    home card."""
    return {p.nav for p in PAGES} | {p.card for p in PAGES if p.card}


def test_every_registry_key_exists():
    keys = {named(k) for k in catalogue("en")}
    assert registry_keys() <= keys, sorted(registry_keys() - keys)


def test_no_unused_keys():
    codes = {f"errors.{code}" for _, _, code, _ in error_raises()}
    names = {
        k for k in catalogue("en") if k.startswith("errors.name_")
    }  # optional: argument names inside messages
    used = literal_keys() | codes | names | figure_word_keys() | registry_keys()
    unused = {k for k in catalogue("en") if named(k) not in used}
    assert not unused, f"keys no code uses (delete them, or use them): {sorted(unused)}"


def test_no_key_twice_in_a_file():
    """JSON keeps the last of two equal keys silently: a file edited by two hands must not hide
    one."""
    for lang in ("en", "zh"):
        for ns in NAMESPACES:
            pairs = json.loads(
                (LOCALES / lang / f"{ns}.json").read_text(encoding="utf-8"), object_pairs_hook=list
            )
            keys = [k for k, _ in pairs]
            assert len(keys) == len(set(keys)), (
                f"{lang}/{ns}: {sorted({k for k in keys if keys.count(k) > 1})}"
            )


def test_chinese_files_are_chinese():
    for ns in NAMESPACES:
        text = "".join(v for k, v in catalogue("zh").items() if k.startswith(f"{ns}."))
        assert re.search(r"[\u4e00-\u9fff]", text), ns
