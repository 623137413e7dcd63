"""The Content-Security-Policy nginx sends with every response of the room (serve_room.py puts it
in nginx.conf).

Scripts run only from the room itself and, inline, only the few the app and Streamlit write, each
allowed by the SHA-256 of its text: Streamlit's index.html sets one flag, the sidebar's link box
(ui/frame.py, one text per language), the connection watcher (ui/room/connection.py, one text) and
the lecture's tour bar, speaker view and slide export (ui/lecture/tour.py, ui/lecture/export.py, one
text each; their data in attributes). The charts' and formulas' modules (ui/chart.js, ui/formula.js)
are no inline scripts: Streamlit imports a v2 component's code from a blob: URL it makes. A script
an attacker slips into a page (through a markdown or HTML hole) matches no hash and does not run;
nothing can be sent to or loaded from another host. tests/test_room_security.py opens every page
through nginx in Chromium and fails on any violation, so a new or edited inline script that is not
listed here shows up there.
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from pathlib import Path

import streamlit

ROOT = Path(__file__).resolve().parent.parent
# An inline script (no attributes: one with src= is a file of the room, covered by 'self').
_INLINE = re.compile(r"<script>(.*?)</script>", re.S)


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def streamlit_inline_scripts() -> list[str]:
    """The inline scripts of Streamlit's own page (index.html, served as is)."""
    index = Path(streamlit.__file__).parent / "static" / "index.html"
    return _INLINE.findall(index.read_text(encoding="utf-8"))


def app_inline_scripts() -> list[str]:
    """Every inline script the app's pages send (through st.html), in every language."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from ui import frame
    from ui.i18n import LANGUAGES
    from ui.lecture import export, tour
    from ui.room import connection

    scripts = [connection.SCRIPT, *tour.SCRIPTS, *export.SCRIPTS]
    for lang in LANGUAGES:
        scripts += _INLINE.findall(frame._LINK_HTML.format(copy="", lang=lang))
        scripts += _INLINE.findall(frame._LANG_HTML.format(html_lang=frame.HTML_LANG[lang]))
    return scripts


def policy() -> str:
    """The policy, one directive per kind of resource, each as narrow as the pages allow."""
    hashes = " ".join(
        dict.fromkeys(_sha256(s) for s in streamlit_inline_scripts() + app_inline_scripts())
    )
    directives = [
        # Nothing that is not named below (workers, frames, media, manifests: the pages use none).
        "default-src 'none'",
        # Streamlit's bundles from the room, the inline scripts above by hash, and WebAssembly
        # compilation only (not JavaScript eval): protobuf's long.js builds a tiny wasm module for
        # 64-bit arithmetic. Plotly and the rest of the app need no eval. blob:: Streamlit loads a
        # v2 component's module (ui/chart.js, ui/formula.js: files of the app) from a blob: URL it
        # makes of the text; only a script already running in the page can make one, so it opens
        # no way in for text an attacker writes into a page.
        f"script-src 'self' {hashes} blob: 'wasm-unsafe-eval'",
        # Streamlit writes its styles at run time (emotion's <style> elements); Plotly and the
        # app's HTML set style attributes: 'unsafe-inline' (a style cannot run code).
        "style-src 'self' 'unsafe-inline'",
        # Streamlit's fonts are files of the room; its CSS also embeds one as a data: URL.
        "font-src 'self' data:",
        # The room's images; the emoji page icon (an SVG data: URL Streamlit makes), images of
        # tables and of Plotly's PNG export (data:), Plotly's export drawn through a blob: URL.
        "img-src 'self' data: blob:",
        # The websocket and Streamlit's health and host-config requests, all to the room ('self'
        # covers ws:// and wss:// of the same host and port in CSP 3 browsers).
        "connect-src 'self'",
        # No plugins; no <base> that moves relative URLs; no form posts anywhere.
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        # Not framed by any page, the room's own included (as X-Frame-Options DENY says).
        "frame-ancestors 'none'",
    ]
    return "; ".join(directives)


if __name__ == "__main__":
    print(policy())
