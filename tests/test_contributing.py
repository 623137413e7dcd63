"""CONTRIBUTING.md as a contributor reads it: its example page runs as written, and every module,
file and dotted name it cites exists."""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

import pytest
from apptest_util import ROOT, chart_config, chart_spec, charts, errors, run_page
from streamlit.testing.v1 import AppTest

from ui.registry import PAGES
from visattn.errors import InputError
from visattn.lessons import modern_attention as lesson

GUIDE = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
PACKAGES = ("visattn", "ui", "pages", "deploy", "tests", "benchmarks")


def example_page() -> tuple[str, str]:
    """The page the guide's example is cut from, and the example: the fenced python block under
    "## A page", read from the guide at test time."""
    found = re.search(
        r"^## A page\nFrom `(pages/\w+\.py)`.*?```python\n(.*?)```", GUIDE, re.S | re.M
    )
    return found.group(1), found.group(2)


def run_example(tmp_path: Path, params: dict[str, str]) -> AppTest:
    """The example as a scratch copy of the app whose page is the example, opened as that page's
    first request with ``params`` in the URL."""
    path, example = example_page()
    shutil.copy(ROOT / "app.py", tmp_path / "app.py")
    shutil.copytree(ROOT / "pages", tmp_path / "pages")
    (tmp_path / path).write_text(example, "utf-8")
    at = AppTest.from_file(str(tmp_path / "app.py"), default_timeout=60)
    at.switch_page(path)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    return at


def chart(at: AppTest, name: str) -> str:
    """The figure of the one chart ``ui.charts.show`` drew as ``name`` (its slide's file name)."""
    (found,) = [
        c
        for c in charts(at)
        if chart_config(c)["toImageButtonOptions"]["filename"] == f"visattn_{name}"
    ]
    return chart_spec(found)


def the_page(params: dict[str, str]) -> AppTest:
    """The page the example is cut from, opened on its sliding-window tab with ``params``."""
    path, _ = example_page()
    (page_id,) = [p.id for p in PAGES if p.path == path]
    return run_page(page_id, {"mo_sec": "window", **params})


@pytest.mark.parametrize(
    "params", [{}, {"mo_wt": "12", "mo_w": "3", "mo_sinks": "2", "lang": "zh"}]
)
def test_the_example_page_draws_what_the_page_it_is_cut_from_draws(tmp_path, params):
    at = run_example(tmp_path, params)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    page = the_page(params)
    assert not page.exception, page.exception
    # the same mask, the same sinks, the same words as the real page's section, at the same link
    assert chart(at, "sliding_window_mask") == chart(page, "sliding_window_mask")


def test_the_example_page_reports_bad_input_through_the_one_error_path(tmp_path):
    """A window the lesson refuses shows the translated error the real page shows, no traceback."""
    window = 0  # below every window: lesson.window_section refuses it
    with pytest.raises(InputError):
        lesson.window_section(lesson.CONTROLS["mo_wt"].default, window)
    example = run_example(tmp_path, {"mo_w": str(window)})
    page = the_page({"mo_w": str(window)})
    assert not example.exception and not page.exception
    assert errors(example) and errors(example) == errors(page)


# ---- every name the guide cites ---------------------------------------------------------------

CITED = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(rf"^(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+")
# a module of ui/ or visattn/ named without its package (`url_state.bind_controls`)
MODULES = {
    p.stem: f"{p.parent.name}.{p.stem}" for d in ("ui", "visattn") for p in (ROOT / d).glob("*.py")
}
SHORT = re.compile(rf"^(?!\w+\.(?:py|js)$)(?:{'|'.join(sorted(MODULES))})(?:\.[A-Za-z_]\w*)+")
FILE = re.compile(r"^(?:[\w.-]+/)+[\w.-]+\.(?:py|js|json|toml|md)$|^[\w-]+\.(?:py|md)$")


def cited(pattern: re.Pattern) -> list[str]:
    """Every backticked name in the guide that ``pattern`` matches (a call's arguments cut off)."""
    found = (pattern.match(m.group(1).strip()) for m in CITED.finditer(GUIDE))
    return sorted({m.group(0) for m in found if m})


def resolve(dotted: str) -> object:
    """The object a dotted name stands for: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_guide_cites_names():
    assert len(cited(DOTTED)) > 20 and len(cited(FILE)) > 10  # the patterns still find its names
    assert cited(SHORT)


@pytest.mark.parametrize("name", cited(DOTTED))
def test_every_dotted_name_the_guide_cites_exists(name):
    resolve(name)


@pytest.mark.parametrize("name", cited(SHORT))
def test_every_module_attribute_the_guide_cites_exists(name):
    module, _, rest = name.partition(".")
    resolve(f"{MODULES[module]}.{rest}")


@pytest.mark.parametrize("path", cited(FILE))
def test_every_file_the_guide_cites_exists(path):
    """A path from the repository's root, or a bare file name (in a table row of its folder)."""
    assert (ROOT / path).exists() if "/" in path else any(ROOT.glob(f"*/{path}"))
