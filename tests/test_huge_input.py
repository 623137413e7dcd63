"""A 20 MB paste cannot freeze a lecture hall: the server drops the oversized message at once and
another session's page still runs. (A browser's text box already stops at ``max_chars``; this is the
hostile client.)"""

import asyncio
import sys

from apptest_util import ROOT
from browser_util import streamlit_server

sys.path.insert(0, str(ROOT / "benchmarks"))
from load_ws import _run_once  # noqa: E402


async def _scenario(ws_url: str, words: int) -> tuple[bool, str]:
    import websockets

    async with (
        websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None) as other,
        websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None) as hostile,
    ):
        paste = asyncio.create_task(
            _run_once(hostile, "pretrained", "pt_text=" + "word%20" * words, 120)
        )
        served = await _run_once(other, "pretrained", "lang=zh", 300)  # another visitor, meanwhile
        try:
            await paste
            dropped = False
        except websockets.ConnectionClosed:
            dropped = True
        return dropped, served


def test_a_20_mb_paste_is_dropped_and_others_are_served():
    with streamlit_server() as url:
        ws = url.replace("http", "ws") + "/_stcore/stream"
        dropped, served = asyncio.run(
            _scenario(ws, 4_000_000)
        )  # 28 MB as sent (the spaces URL-encoded)
        small_dropped, _ = asyncio.run(_scenario(ws, 200))  # the same request at a normal size
    assert dropped, "the server accepted a 20 MB message"
    assert served == "", served  # the other page ran to its end, with no exception element
    assert not small_dropped  # it is the size that is refused, not the request
