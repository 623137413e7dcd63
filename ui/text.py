"""Making user-supplied text safe for Streamlit markdown (titles, captions, alerts, labels)."""

from __future__ import annotations

import re

# Every character CommonMark or Streamlit gives a meaning: emphasis, links and images, code, HTML, math,
# headings, lists, tables, directives (:red[…], :material/…:), and backslash itself.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:=^&])")


def escape(text: str) -> str:
    """``text`` with every markdown-active character backslash-escaped, so it renders as itself."""
    return _SPECIAL.sub(r"\\\1", str(text))
