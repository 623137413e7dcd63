"""The layers hold: app.py → pages → ui → visattn, with ``visattn.lessons`` drawing
nothing (no import of ``visattn.figures``) and ``visattn`` knowing nothing of Streamlit."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module) if p)
            out |= {module} | {f"{module}.{a.name}" for a in node.names}
    return out


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", modules("visattn/lessons"), ids=lambda p: p.name)
def test_lessons_draw_nothing(path):
    drawn = {m for m in imported(path) if m.startswith("visattn.figures") or m == "plotly"}
    assert not drawn, f"{path.name} imports {sorted(drawn)}"


@pytest.mark.parametrize("path", modules("visattn"), ids=lambda p: p.name)
def test_visattn_knows_no_streamlit(path):
    assert not {m for m in imported(path) if m.split(".")[0] in ("streamlit", "ui", "pages")}


@pytest.mark.parametrize("path", modules("ui"), ids=lambda p: p.name)
def test_ui_imports_no_page(path):
    assert not {m for m in imported(path) if m.split(".")[0] == "pages"}


BACKGROUND = {"threading", "time", "concurrent.futures", "streamlit.runtime", "ui.room.budget"}


@pytest.mark.parametrize("path", modules("pages"), ids=lambda p: p.name)
def test_pages_run_no_background_work(path):
    """Threads, polling, session ids from Streamlit's internals and the budget's queue are
    ``ui.room.jobs``'s: a page sees a job's state, nothing threaded."""
    used = {m for m in imported(path) if any(m == b or m.startswith(b + ".") for b in BACKGROUND)}
    assert not used, f"{path.name} imports {sorted(used)}"


APP_CODE = [
    ROOT / "app.py",
    *modules("pages"),
    *modules("ui"),
    *modules("visattn"),
    *modules("deploy"),
]


@pytest.mark.parametrize("path", APP_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_never_imports_the_test_references(path):
    """torch and transformers are the tests' references (requirements-test.txt pins torch); the
    app runs without them: no module of it imports either, not even lazily inside a function."""
    references = {m for m in imported(path) if m.split(".")[0] in ("torch", "transformers")}
    assert not references, f"{path.name} imports {sorted(references)}"


def calls_of(path: Path, module: str, name: str) -> list[int]:
    """The lines where ``path`` calls ``module.name(…)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == module
    ]


@pytest.mark.parametrize("path", [*modules("pages"), *modules("ui")], ids=lambda p: p.name)
def test_formulas_go_through_the_formula_element(path):
    """A displayed formula is ui.formulas.formula (typeset once per TeX), never st.latex (rebuilt
    on every rerun of its section)."""
    lines = calls_of(path, "st", "latex")
    assert not lines, f"{path.name}: st.latex at lines {lines}"
