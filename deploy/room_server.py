"""`streamlit run` with the two room rules that no config option gives. serve_room.py starts each
replica so.

    python deploy/room_server.py run app.py --server.port 8601 ...   (the same arguments as
    `streamlit run`)

1. No external-IP look-up, ever. With `browser.serverAddress` set Streamlit skips it at start-up,
   but it still calls `net_util.get_external_ip()` (an HTTP request to a public IP-check host, 1 s
   timeout, twice, not cached when it fails) for every websocket whose Origin is not this host — so
   each hostile cross-origin handshake could stall the server and leave the machine. Here it answers
   "unknown".
2. A client's "clear cache" message is ignored. `client.toolbarMode = "viewer"` hides the menu item,
   but the server still obeys the message from any websocket client, and it clears every cache (the
   MiniLM weights included) for every session. The presenter restarts the room instead.

Both replace one Streamlit function each; tests/test_replicas.py checks that the functions still
exist, so a Streamlit upgrade that renames them fails a test instead of silently dropping the rule.
"""

from __future__ import annotations

import logging
import sys

from streamlit import net_util
from streamlit.runtime import app_session

_LOG = logging.getLogger("visattn.room")


def _no_external_ip() -> None:
    return None


def _ignore_clear_cache(self) -> None:  # noqa: ARG001 - replaces a method
    _LOG.warning(
        "A client asked to clear every cache; ignored in a room (restart the room to clear them)."
    )


def harden() -> None:
    net_util.get_external_ip = _no_external_ip
    app_session.AppSession._handle_clear_cache_request = _ignore_clear_cache


if __name__ == "__main__":
    harden()
    from streamlit.web.cli import main

    sys.argv[0] = "streamlit"
    main(prog_name="streamlit")
