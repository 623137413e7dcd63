"""The app's pages, in the order of the lesson: the one list that the navigation, the home cards,
the tests and the benchmarks read.

No Streamlit here, so tests and tools can import it. ``id`` is also the page's locale namespace
(``ui/locales/<lang>/<id>.json``); ``nav`` and ``card`` are the keys of its name in the navigation
and of its card on the home page (literal keys, so the locale test finds them); ``lesson`` is the
module whose ``CONTROLS`` declare every URL parameter the page takes.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import NamedTuple


class Page(NamedTuple):
    id: str
    path: str  # the script, relative to the app root
    icon: str
    nav: str  # locale key of the page's name (navigation, browser tab)
    card: str | None  # locale key of its card on the home page (None: no card)
    lesson: str | None  # the lesson module (None: the home page has no controls of its own)

    @property
    def url_path(self) -> str:
        """The page's address below the app root ("" for home)."""
        return "" if self.path == "app.py" else PurePosixPath(self.path).stem


PAGES = (
    Page("home", "app.py", ":material/home:", "home.nav", None, None),
    Page(
        "kernel",
        "pages/kernel_regression.py",
        ":material/show_chart:",
        "kernel.nav",
        "kernel.card",
        "visattn.lessons.kernel",
    ),
    Page(
        "single_head",
        "pages/single_head.py",
        ":material/search:",
        "single_head.nav",
        "single_head.card",
        "visattn.lessons.single_head",
    ),
    Page(
        "multi_head",
        "pages/multi_head.py",
        ":material/psychology:",
        "multi_head.nav",
        "multi_head.card",
        "visattn.lessons.multi_head",
    ),
    Page(
        "positional",
        "pages/positional_encoding.py",
        ":material/waves:",
        "positional.nav",
        "positional.card",
        "visattn.lessons.positional",
    ),
    Page(
        "pretrained",
        "pages/pretrained.py",
        ":material/smart_toy:",
        "pretrained.nav",
        "pretrained.card",
        "visattn.lessons.pretrained",
    ),
    Page(
        "reading",
        "pages/reading.py",
        ":material/biotech:",
        "reading.nav",
        "reading.card",
        "visattn.lessons.reading",
    ),
    Page(
        "decoder",
        "pages/decoder.py",
        ":material/skip_next:",
        "decoder.nav",
        "decoder.card",
        "visattn.lessons.decoder",
    ),
    Page(
        "training",
        "pages/training.py",
        ":material/model_training:",
        "training.nav",
        "training.card",
        "visattn.lessons.training",
    ),
    Page(
        "modern",
        "pages/modern_attention.py",
        ":material/rocket_launch:",
        "modern.nav",
        "modern.card",
        "visattn.lessons.modern_attention",
    ),
)
BY_ID = {p.id: p for p in PAGES}
