"""When the connection to the server drops: Streamlit's own texts in the page's language, and a
session that comes back on another replica (or on a restarted one) rebuilt before its first change.

:func:`install` is called once per full run by ``ui/frame.py``'s ``page()``. At the bottom of the
sidebar it draws a fragment that shows nothing and a static script with its style and texts, which
show only when needed. Together they do three things:

1. **A rebuild on every reconnect.** Streamlit's frontend asks for a full rerun after a reconnect
   only when its last run was a fragment run, was interrupted, or a fragment reruns on a timer;
   otherwise it assumes the server still holds its session. A replica that died took that session
   with it: the new session has no state and no fragments, so the first control change after the
   move was lost — a full rerun rebuilds the controls from the URL (the session state then wins
   over the browser's new widget value), a section's partial rerun finds no fragment and does
   nothing. A fragment with a timer (once a day, drawing nothing) makes the frontend always ask for
   a full rerun on reconnect; the URL holds every setting, so that run rebuilds the old session
   (with 3. below, and deploy/room_server.py's third rule, before the student's next change is
   taken). A reconnect to a session that survived costs one rerun.
2. **Streamlit's texts translated.** A static script (the same bytes on every page and language:
   the CSP in ``deploy/csp.py`` allows it by hash) watches the status widget (“Connecting”,
   “Error”), the connection-error dialog, tooltips, error boxes, a text box's “Press Enter to
   apply” and the ⋮ menu, and replaces Streamlit's English
   with the texts of ``ui/locales/<lang>/room.json``, which it reads from a data attribute beside
   it. Texts Streamlit draws before the app's first run (“Please wait…”, a first connection that
   never succeeds) come before this script and stay English.
3. **No input while the page is restored.** From a lost connection until the first run after the
   reconnect is over, the same script dims the page, ignores the pointer and the keyboard, and says
   so: that run draws every control from the URL, and a control changed meanwhile would be reset
   in the browser while the server kept the change.
"""

from __future__ import annotations

import html
import json
from datetime import timedelta

import streamlit as st

from ..i18n import t

# How often the do-nothing fragment reruns. It only has to exist; once a day costs nothing (and
# stays below setInterval's limit of 2**31 ms, about 24.8 days).
REBUILD_TIMER = timedelta(days=1)

# Streamlit 1.67's English (the frontend's strings and the server's redacted-error text); the
# values are this app's texts. tests/test_room_connection.py checks each is still in Streamlit.
GENERIC_ERROR = (
    "This app has encountered an error. The original error message is redacted to prevent data "
    "leaks. Full error details have been recorded in the logs (if you're on Streamlit Cloud, click "
    "on 'Manage app' in the lower right of your app)."
)
# The title of Streamlit's connection-error dialog. Its body varies (the reason of the last failed
# attempt: "Is Streamlit still running? …" with a `streamlit run` command, "Connection failed with
# status 502.", "Connection timed out.", …): the watcher replaces all of it with room.error_body.
ERROR_TITLE = "Connection error"


def streamlit_texts() -> dict[str, str]:
    """Streamlit's English text → this app's text in the current language."""
    return {
        "Connecting": t("room.connecting"),
        "Connecting to Streamlit server": t("room.connecting_help"),
        "Error": t("room.disconnected"),
        "Unable to connect to Streamlit server": t("room.disconnected_help"),
        ERROR_TITLE: t("room.error_title"),
        "Stop": t("room.stop"),
        "Stopping...": t("room.stopping"),
        GENERIC_ERROR: t("room.app_error"),
        # under a text box while it is edited, and the ⋮ menu
        "Press Enter to apply": t("room.enter_to_apply"),
        "Press Ctrl+Enter to apply": t("room.ctrl_enter_to_apply"),
        "Press ⌘+Enter to apply": t("room.cmd_enter_to_apply"),
        "Print": t("room.menu_print"),
        "Record screen": t("room.menu_record"),
    }


# The watcher. Static (no language, no user data): its texts come from the data attribute, so one
# CSP hash covers it. Installed once per page load (a flag on window); each run refreshes the texts.
# From a lost connection until the first run after the reconnect is over (at most 3 s for that run
# to start, 60 s for it to end) the page takes no input and says it is being restored: a control
# changed meanwhile would be reset by that run (it draws every control from the URL).
SCRIPT = r"""(() => {
  const data = document.getElementById("visattn-connection");
  if (!data) return;
  window.visattnTexts = JSON.parse(data.dataset.texts);
  if (window.visattnWatching) return;
  window.visattnWatching = true;
  const texts = () => window.visattnTexts;
  const roots = '[data-testid="stStatusWidget"], [role="dialog"], '
    + '[data-testid="stTooltipContent"], [data-baseweb="tooltip"], [data-testid="stException"], '
    + '[data-testid="InputInstructions"], [data-testid="stMainMenuList"]';
  const textNodes = (root) => {
    const out = [], walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) out.push(node);
    return out;
  };
  const put = (node, text) => { if (node.data !== text) node.data = text; };
  const translate = () => {
    const { replace, errorTitle, errorBody } = texts();
    for (const root of document.querySelectorAll(roots)) {
      for (const node of textNodes(root)) {
        const text = node.data.replace(/\s+/g, " ").trim();
        if (Object.hasOwn(replace, text)) put(node, replace[text]);
      }
    }
    // The connection-error dialog: whatever Streamlit says under its title, the app's own text.
    for (const dialog of document.querySelectorAll('[role="dialog"]')) {
      const nodes = textNodes(dialog);
      if (!nodes.some((n) => n.data === replace[errorTitle])) continue;
      const body = nodes.filter((n) => !n.parentElement.closest("[slot='title'], h2, button"));
      body.forEach((n, i) => put(n, i === 0 ? errorBody : ""));
      for (const pre of dialog.querySelectorAll("pre")) pre.style.display = "none";
    }
  };
  const notice = document.createElement("div");
  notice.id = "visattn-restoring";
  notice.setAttribute("role", "status");
  notice.hidden = true;
  document.body.appendChild(notice);
  let restoring = false, sawRun = false, timer = 0;
  const block = (on) => {
    restoring = on;
    sawRun = false;
    clearTimeout(timer);
    document.documentElement.classList.toggle("visattn-restoring", on);
    notice.textContent = texts().restoring;
    notice.hidden = !on;
  };
  const until = (ms) => { clearTimeout(timer); timer = setTimeout(() => block(false), ms); };
  const follow = (m) => {
    const now = m.target.getAttribute(m.attributeName);
    if (m.attributeName === "data-test-connection-state") {
      if (now !== "CONNECTED") { if (!restoring) block(true); } else if (restoring) until(3000);
    } else if (restoring && m.target.getAttribute("data-test-connection-state") === "CONNECTED") {
      const run = ["running", "rerunRequested"];
      if (run.includes(m.oldValue) || run.includes(now)) {
        if (!sawRun) until(60000);
        sawRun = true;
      }
      if (sawRun && now === "notRunning") block(false);
    }
  };
  const stop = (e) => { if (restoring) { e.preventDefault(); e.stopImmediatePropagation(); } };
  for (const type of ["keydown", "keypress", "beforeinput", "paste", "drop"]) {
    window.addEventListener(type, stop, true);
  }
  let queued = false;
  const observer = new MutationObserver((records) => {
    for (const m of records) if (m.type === "attributes") follow(m);
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; translate(); }); }
  });
  observer.observe(document.body, {
    childList: true, subtree: true, characterData: true, attributeOldValue: true,
    attributeFilter: ["data-test-connection-state", "data-test-script-state"],
  });
  translate();
})();"""

# While restoring: the page dimmed and deaf to the pointer, and a notice at the top.
STYLE = """html.visattn-restoring [data-testid="stMain"],
html.visattn-restoring [data-testid="stSidebar"]
{ pointer-events: none; opacity: 0.55; transition: opacity 0.2s; }
#visattn-restoring { position: fixed; top: 0.75rem; left: 50%; transform: translateX(-50%);
  z-index: 1000100; padding: 0.35rem 0.9rem; border-radius: 1rem; font-size: 0.9rem;
  background: rgba(49, 51, 63, 0.92); color: #fff; }"""


def _rebuild_on_reconnect() -> None:
    """Draws nothing: its timer alone makes the frontend rerun the page after every reconnect."""


_reconnect_fragment = st.fragment(_rebuild_on_reconnect, run_every=REBUILD_TIMER)


def _html() -> str:
    texts = {
        "replace": streamlit_texts(),
        "errorTitle": ERROR_TITLE,
        "errorBody": t("room.error_body"),
        "restoring": t("room.restoring"),
    }
    attr = html.escape(json.dumps(texts, ensure_ascii=False), quote=True)
    return (
        f"<style>{STYLE}</style>"
        f'<div id="visattn-connection" hidden data-texts="{attr}"></div><script>{SCRIPT}</script>'
    )


def install() -> None:
    """All of it, at the end of the sidebar (call once per full run, from ``page()``)."""
    with st.sidebar:
        _reconnect_fragment()
        st.html(_html(), unsafe_allow_javascript=True)
