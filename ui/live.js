// visattn's controls drawn in figures, in the browser (ui/url_state.py, visattn/figures/live.py).
// This prelude goes before each element's own script (ui/chart.js, ui/formula.js, ui/table.js);
// its state is the document's (on window), one for them all.
//
// A control drawn in a figure moves in the browser: its slider writes the value into the address
// bar and tells every element of the page that shows what the control changes (a figure that
// follows it, a formula, a table), and nothing is sent to the server. The server knows the value
// a link opened with and the values it set itself (a button, another control narrowing the
// range); each element it draws says which value that is and when the server set it (a serial),
// and the browser keeps a position of its own unless the server has set the control since.
//
// Streamlit writes the query string whenever its server does, from what the server knows, so the
// browser's positions are written back after every change of the address (replaceState and
// pushState, wrapped once per document).

const CONTROLS = (window.visattnControls ??= new Map()); // "path|key" → {text, serial, fallback}
const CONTROL_EVENT = "visattn-control";

function controlId(key) {
  return `${location.pathname}|${key}`;
}

// The address bar with this page's controls at the browser's values (a control at its default,
// the fallback, leaves the URL as the server leaves it).
function syncAddress() {
  const url = new URL(location.href);
  let changed = false;
  for (const [id, entry] of CONTROLS) {
    const cut = id.lastIndexOf("|");
    if (id.slice(0, cut) !== location.pathname) continue;
    const key = id.slice(cut + 1);
    const wanted = entry.text === entry.fallback ? null : entry.text;
    if (url.searchParams.get(key) === wanted) continue;
    if (wanted === null) url.searchParams.delete(key);
    else url.searchParams.set(key, wanted);
    changed = true;
  }
  if (!changed) return;
  try {
    window.visattnHistory.replace(history.state, "", url.toString());
  } catch (error) {
    console.warn("visattn: the address was not updated", error); // over the browser's limit
  }
}

if (!window.visattnHistory) {
  const replace = history.replaceState.bind(history);
  const push = history.pushState.bind(history);
  window.visattnHistory = { replace };
  history.replaceState = function (state, title, url) {
    replace(state, title, url);
    syncAddress();
  };
  history.pushState = function (state, title, url) {
    push(state, title, url);
    syncAddress();
  };
}

// The value an element shows for control `key`, given what the server drew it with (`server`:
// [text, serial, default text]) and whether the element has a position for a text (`has`): the
// browser's own, unless the server set the control after the browser last took its value, or the
// element cannot show it (the range changed).
function settleControl(key, server, has) {
  const [text, serial, fallback] = server;
  const id = controlId(key);
  const mine = CONTROLS.get(id);
  let chosen;
  if (!mine || serial > mine.serial) chosen = { text, serial, fallback };
  else if (!has(mine.text)) chosen = { text, serial: mine.serial, fallback };
  else chosen = { text: mine.text, serial: mine.serial, fallback };
  CONTROLS.set(id, chosen);
  syncAddress();
  return chosen.text;
}

// Browsers limit how often a page may change its history state (Chrome: 200 times in 10 s, the
// rest ignored; Safari: 100 in 30 s, then it throws): a drag writes the address at most every
// ADDRESS_MS, its last position always.
const ADDRESS_MS = 400;

function writeAddressSoon() {
  if (window.visattnAddressTimer) return;
  window.visattnAddressTimer = setTimeout(flushAddress, ADDRESS_MS);
}

// The address with every position moved so far (for what reads it now: "Add this view", a link)
function flushAddress() {
  clearTimeout(window.visattnAddressTimer);
  window.visattnAddressTimer = null;
  syncAddress();
}
window.visattnFlushAddress = flushAddress;

// Moves not yet told to the elements that follow them: told once per animation frame, the last
// position of each control, after the figure moved by hand has drawn its own (Plotly draws a
// slider's step in the next frame too). A quick drag passes several positions in one frame.
const MOVES = (window.visattnMoves ??= new Map()); // key → {text, source}

function tellMoves() {
  const moves = [...MOVES];
  MOVES.clear();
  for (const [key, { text, source }] of moves) {
    window.dispatchEvent(new CustomEvent(CONTROL_EVENT, { detail: { key, text, source } }));
  }
}

// The reader moved control `key` to `text` (in `source`): the address bar, then every element.
function moveControl(key, text, source) {
  const id = controlId(key);
  const mine = CONTROLS.get(id) || { serial: 0, fallback: null };
  CONTROLS.set(id, { ...mine, text });
  writeAddressSoon();
  if (MOVES.size === 0) requestAnimationFrame(tellMoves);
  MOVES.set(key, { text, source });
}

// Calls `apply(key, text)` whenever another element moves a control (once per element: the
// listener is kept on `holder` and dropped by `stopFollowing`).
function followControls(holder, apply) {
  if (holder.__visattnFollow) window.removeEventListener(CONTROL_EVENT, holder.__visattnFollow);
  holder.__visattnFollow = (event) => {
    if (event.detail.source !== holder) apply(event.detail.key, event.detail.text);
  };
  window.addEventListener(CONTROL_EVENT, holder.__visattnFollow);
}

function stopFollowing(holder) {
  if (holder.__visattnFollow) window.removeEventListener(CONTROL_EVENT, holder.__visattnFollow);
  holder.__visattnFollow = null;
}

