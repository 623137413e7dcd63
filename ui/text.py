"""Making user-supplied text safe for Streamlit markdown (titles, captions, alerts, labels)."""

from __future__ import annotations

import re

# Every character CommonMark or Streamlit gives a meaning: emphasis, links and images, code, HTML,
# math, headings, lists, tables, directives (:red[…], :material/…:), and backslash itself.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:=^&])")
# GitHub-flavoured markdown also links bare addresses (http://…, www.…, a@b.c): a zero-width space
# breaks them.
_AUTOLINK = re.compile(r"(?i)(https?|ftp|www|@)")


def escape(text: str) -> str:
    """``text`` with every markdown-active character backslash-escaped and bare addresses broken, so
    it renders as itself and never as a link or an image."""
    return _SPECIAL.sub(r"\\\1", _AUTOLINK.sub("\\1\u200b", str(text)))
