"""`streamlit run` with the three room rules that no config option gives. serve_room.py starts each
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

3. A rerun a browser asks for while its session's first run is still going waits for that run to
   end. A browser whose replica died reconnects to a new session on another one (or on the restarted
   one), which ui/room/connection.py has rebuilt at once from the URL. If the student changes a
   control before that first run is over, Streamlit stops the run (possibly before the control was
   drawn) and starts one with the change; but a control first drawn in a session takes the value the
   page bound from the URL, not the browser's new one, so the change was lost
   (tests/test_room_move.py). Held requests are merged (the newest widget states, a full run if any
   asked for one) and sent once the first run has stopped.

Each replaces one Streamlit function; tests/test_replicas.py checks that the functions still exist,
so a Streamlit upgrade that renames them fails a test instead of silently dropping the rule.
"""

from __future__ import annotations

import logging
import sys

from streamlit import net_util
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner import ScriptRunnerEvent

_LOG = logging.getLogger("visattn.room")
_rerun_request = app_session.AppSession._handle_rerun_script_request
_scriptrunner_event = app_session.AppSession._handle_scriptrunner_event_on_event_loop
# The events that end a session's first run (SCRIPT_STOPPED_FOR_RERUN does not: a new run follows).
_FIRST_RUN_OVER = {
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS,
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_COMPILE_ERROR,
    ScriptRunnerEvent.SHUTDOWN,
}


def _no_external_ip() -> None:
    return None


def _ignore_clear_cache(self) -> None:  # noqa: ARG001 - replaces a method
    _LOG.warning(
        "A client asked to clear every cache; ignored in a room (restart the room to clear them)."
    )


def _merged(requests: list[ClientState | None]) -> ClientState | None:
    """One request for several held ones: the newest (the browser sends every widget's state each
    time), as a full run when any of them asked for one (a full run also runs every section)."""
    newest = requests[-1]
    if newest is None:
        return None
    merged = ClientState()
    merged.CopyFrom(newest)
    if any(r is None or not r.fragment_id for r in requests):
        merged.fragment_id = ""
        merged.is_auto_rerun = False
    return merged


def _rerun_after_first_run(self, client_state: ClientState | None = None) -> None:
    """The browser's rerun request: the session's first one starts it; later ones wait while the
    first run is going."""
    phase = self.__dict__.setdefault("_visattn_phase", "new")
    if phase == "first run":
        self.__dict__.setdefault("_visattn_held", []).append(client_state)
        return
    if phase == "new":
        self._visattn_phase = "first run"
    _rerun_request(self, client_state)


def _release_after_first_run(self, sender, event, *args, **kwargs) -> None:
    """Streamlit's handler of script-runner events; at the end of the first run, the held
    requests."""
    current = sender is not None and sender is self._scriptrunner
    _scriptrunner_event(self, sender, event, *args, **kwargs)
    if current and event in _FIRST_RUN_OVER and self.__dict__.get("_visattn_phase") == "first run":
        self._visattn_phase = "ready"
        held = self.__dict__.pop("_visattn_held", [])
        if held:
            _LOG.info("%d rerun request(s) held during the session's first run: sent", len(held))
            _rerun_request(self, _merged(held))


def harden() -> None:
    net_util.get_external_ip = _no_external_ip
    app_session.AppSession._handle_clear_cache_request = _ignore_clear_cache
    app_session.AppSession._handle_rerun_script_request = _rerun_after_first_run
    app_session.AppSession._handle_scriptrunner_event_on_event_loop = _release_after_first_run


if __name__ == "__main__":
    harden()
    from streamlit.web.cli import main

    sys.argv[0] = "streamlit"
    main(prog_name="streamlit")
