"""Shared helpers for the per-page AppTest modules."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
PAGES = {
    "home": "app.py",
    "kernel": "pages/kernel_regression.py",
    "single_head": "pages/single_head.py",
    "multi_head": "pages/multi_head.py",
    "positional": "pages/positional_encoding.py",
    "pretrained": "pages/pretrained.py",
}


def run_page(name: str, params: dict | None = None, timeout: float = 60) -> AppTest:
    """Run one page script as its first request, with ``params`` in the URL."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if name != "home":
        at.switch_page(PAGES[name])  # the page runs with app.py as entrypoint, as on the server
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    return at


def assert_clean(at: AppTest) -> None:
    """No exception element on the page."""
    assert not at.exception, [e.value for e in at.exception]


def figures(at: AppTest) -> list[dict]:
    """The Plotly figures on the page as dicts."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def array(v) -> np.ndarray:
    """A Plotly array as sent to the browser (plain list or base64 typed array) → ndarray."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        shape = v.get("shape")
        if shape:
            a = a.reshape([int(s) for s in str(shape).split(",")])
        return a
    return np.asarray(v, dtype=float)


def texts(at: AppTest) -> str:
    """All markdown, titles, captions and alerts of the page joined (for language checks)."""
    parts = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "error", "warning", "info", "success"):
        parts += [str(e.value) for e in at.get(kind)]
    return "\n".join(parts)


def errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.error]


def warnings(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.warning]
