"""The app's pages, in the order of the lesson: the one list that the navigation, the home cards,
the tests and the benchmarks read.

No Streamlit here, so tests and tools can import it. A page is its ``id``, and every name of it
derives from the id: its script ``pages/<id>.py`` (``app.py`` for home), and so its address below
the app root; its lesson ``visattn.lessons.<id>`` (whose ``CONTROLS`` declare every URL parameter
the page takes); its locale namespace (``ui/locales/<lang>/<id>.json``), with the keys of its name
in the navigation (``<id>.nav``) and of its card on the home page (``<id>.card``).
"""

from __future__ import annotations

from typing import NamedTuple


class Page(NamedTuple):
    id: str  # the stem of every module of the page (tests/test_names.py)
    icon: str

    @property
    def path(self) -> str:
        """The script, relative to the app root."""
        return "app.py" if self.id == HOME else f"pages/{self.id}.py"

    @property
    def url_path(self) -> str:
        """The page's address below the app root ("" for home)."""
        return "" if self.id == HOME else self.id

    @property
    def nav(self) -> str:
        """Locale key of the page's name (navigation, browser tab)."""
        return f"{self.id}.nav"

    @property
    def card(self) -> str | None:
        """Locale key of its card on the home page (None: home has none)."""
        return None if self.id == HOME else f"{self.id}.card"

    @property
    def lesson(self) -> str | None:
        """The lesson module (None: the home page has no controls of its own)."""
        return None if self.id == HOME else f"visattn.lessons.{self.id}"


HOME = "home"
PAGES = (
    Page(HOME, ":material/home:"),
    Page("kernel_regression", ":material/show_chart:"),
    Page("single_head", ":material/search:"),
    Page("multi_head", ":material/psychology:"),
    Page("positional_encoding", ":material/waves:"),
    Page("pretrained", ":material/smart_toy:"),
    Page("reading", ":material/biotech:"),
    Page("decoder", ":material/skip_next:"),
    Page("training", ":material/model_training:"),
    Page("modern_attention", ":material/rocket_launch:"),
)
BY_ID = {p.id: p for p in PAGES}
