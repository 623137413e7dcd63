"""The app's pages, in the order of the lesson: one list for the navigation, the home cards and the
tests.

No Streamlit here, so tests and tools can import it. ``id`` is also the page's locale namespace
(``ui/locales/<lang>/<id>.json`` holds its ``nav`` and ``card`` texts).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import NamedTuple


class Page(NamedTuple):
    id: str
    path: str  # the script, relative to the app root
    icon: str

    @property
    def url_path(self) -> str:
        """The page's address below the app root ("" for home)."""
        return "" if self.path == "app.py" else PurePosixPath(self.path).stem


PAGES = (
    Page("home", "app.py", "🏠"),
    Page("kernel", "pages/kernel_regression.py", "📈"),
    Page("single_head", "pages/single_head.py", "🔎"),
    Page("multi_head", "pages/multi_head.py", "🧠"),
    Page("positional", "pages/positional_encoding.py", "〰️"),
    Page("pretrained", "pages/pretrained.py", "🤖"),
    Page("reading", "pages/reading.py", "🔬"),
    Page("decoder", "pages/decoder.py", "⏭️"),
)
BY_ID = {p.id: p for p in PAGES}
