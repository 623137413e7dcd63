"""A button and a link that use the address as the browser has it (``ui/address.js``): the
positions of the controls drawn in figures are there (``ui/live.js`` writes them) and nowhere on
the server, so what keeps "this view" — a tour's step, a handout's link — reads them from the
browser."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import streamlit as st

ADDRESS_NAME = "visattn_address"
_address = st.components.v2.component(
    ADDRESS_NAME, js=Path(__file__).with_name("address.js").read_text(), isolate_styles=False
)


def _clicked(key: str, on_view: Callable[[str], None]) -> None:
    """The button's callback: ``on_view`` with the query the browser sent (its own address)."""
    sent = st.session_state[key]["view"]
    if isinstance(sent, str):
        on_view(sent.removeprefix("?"))


def button(label: str, key: str, on_view: Callable[[str], None]) -> None:
    """A button whose click calls ``on_view(query)`` before the next run, ``query`` the address's
    as the browser has it."""
    _address(
        key=key,
        data={"kind": "button", "label": label},
        on_view_change=partial(_clicked, key, on_view),
    )


def link(label: str, key: str, **extra: str) -> None:
    """A link that opens this view as the browser has it, with ``extra`` parameters, in a new
    tab."""
    _address(key=key, data={"kind": "link", "label": label, "extra": extra})
