"""A lecture in the app: the tour bar (step counter, Prev/Next, a clicker's keys, each step opened
scrolled to its figure), the sidebar's tour editor, and the speaker view.

The tour lives in the URL (``tour=intro`` or a lecturer's tour packed by :mod:`visattn.tour`, and
``step=N``) and so in this session only: nothing of it is cached or shared between sessions. A step
is opened as a new page load of its link, so it shows exactly the view its link encodes. The bar and
the speaker view are static scripts (one CSP hash each, ``deploy/csp.py``) that read their data from
attributes beside them; the projector tab and the speaker tab talk over a ``BroadcastChannel`` (same
browser, same origin), never through the server.
"""

from __future__ import annotations

import html
import json
import re
from functools import partial
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from visattn import lecture
from visattn.errors import InputError
from visattn.tour import (
    MAX_NOTES,
    MAX_QUERY,
    MAX_TITLE,
    Step,
    Tour,
    from_link,
    to_json,
    to_link,
    view_query,
)

from .. import address
from ..errors import message, show_error
from ..i18n import lang, t
from ..registry import BY_ID
from ..text import escape

_TAG = re.compile(r"<[^>]+>")  # a chart title's markup (<b>, <br>, <sub>): plain text in a select
_MARKS = {"<sub>": "_", "<sup>": "^", "<br>": " "}
_CHARTS = "_lecture_charts"  # {chart key: figure} of this run (ui.charts.show fills it)


# --- the tour of this session ---------------------------------------------------------------------
def current() -> Tour | None:
    """The session's tour, or None (no tour, or one that could not be read: the notice says so and
    the tour is dropped)."""
    text = st.session_state.get(lecture.TOUR.key, "")
    if not text:
        return None
    if text in lecture.BUILTINS:
        return lecture.BUILTINS[text]
    try:
        return from_link(text)
    except InputError as exc:
        st.session_state[lecture.TOUR.key] = ""
        st.warning(message(exc), icon=":material/warning:")
        return None


def step_number(tour: Tour) -> int:
    """The current step (1-based), held within the tour."""
    return min(max(int(st.session_state.get(lecture.STEP.key, 1)), 1), len(tour))


def title(tour: Tour, step: Step) -> str:
    """A step's title in the page's language (a built-in step's from the locale files)."""
    if tour.builtin:
        return t(step.title)
    if step.title or step.page not in BY_ID:
        return step.title
    return t(BY_ID[step.page].nav)  # an untitled step: its page's name


def notes(tour: Tour, step: Step) -> str:
    return t(step.notes) if tour.builtin else step.notes


def tour_param(tour: Tour) -> str:
    return tour.builtin or to_link(tour)


def step_href(tour: Tour, number: int, speaker: bool = False) -> str:
    """The link of step ``number`` (relative to the app's root, so it works behind a path)."""
    step = tour.step(number)
    params = {k: v for k, v in step.params().items() if k not in lecture.LECTURE_KEYS}
    params |= {"lang": lang(), lecture.TOUR.key: tour_param(tour), lecture.STEP.key: str(number)}
    if speaker:
        return "./?" + urlencode(params | {lecture.SPEAKER.key: "1"})
    if st.session_state.get("present"):
        params["present"] = "1"
    page = BY_ID.get(step.page)
    return f"./{page.url_path if page else ''}?{urlencode(params)}"


def charts() -> dict:
    return st.session_state.setdefault(_CHARTS, {})


def forget_charts() -> None:
    """A new full run: the charts it draws register anew."""
    st.session_state[_CHARTS] = {}


# --- the bar over the page: counter, Prev/Next, keys, scrolling to the figure --------------------
_BAR_HTML = """<div id="visattn-lecture" class="visattn-lecture" data-figure="{figure}"
data-present="{present}" data-prev="{prev}" data-next="{next}" data-tour="{tour}"
data-step="{step}" data-total="{total}" data-open="{open}">{bar}</div><script>{script}</script>"""
_BAR_VISIBLE = """<nav class="visattn-bar" aria-label="{label}">
<a class="visattn-go{prev_off}" href="{prev}" aria-disabled="{prev_dis}">◀ {prev_word}</a>
<span class="visattn-count">{counter}</span><span class="visattn-title">{title}</span>
<a class="visattn-go{next_off}" href="{next}" aria-disabled="{next_dis}">{next_word} ▶</a></nav>"""
BAR_STYLE = """.visattn-bar { display: flex; align-items: center; gap: 0.8rem; position: fixed;
  bottom: 0.6rem; left: 50%; transform: translateX(-50%); z-index: 999990; max-width: 92vw;
  padding: 0.3rem 0.6rem; border-radius: 0.6rem; background: rgba(250, 250, 252, 0.94);
  box-shadow: 0 1px 6px rgba(0, 0, 0, 0.18); font-size: 0.85rem; }
.visattn-bar .visattn-count { font-weight: 600; white-space: nowrap; }
.visattn-bar .visattn-title { max-width: 40vw; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }
.visattn-go { text-decoration: none; padding: 0.15rem 0.7rem; border-radius: 0.4rem;
  border: 1px solid rgba(128,128,128,0.45); color: inherit !important; white-space: nowrap; }
.visattn-go.off { opacity: 0.35; pointer-events: none; }
[class*="st-key-chart_"] { scroll-margin-top: 3.75rem; }"""

# Static: every value comes from the data attributes. Once per page load (and view) it scrolls to
# the step's figure (the page's first one when the step names none) — and on a projector without a
# tour, to the page's first figure — unless the reader scrolled first; once per document it listens
# for a clicker's keys and for the speaker tab.
BAR_SCRIPT = r"""(() => {
  const data = () => document.getElementById("visattn-lecture");
  const el = data();
  if (!el) return;
  const d = el.dataset;
  if (d.open) { location.replace(d.open); return; }  // a bare ?tour=…&step=N: open that step
  const seen = location.pathname + "|" + d.step + "|" + d.figure;
  if ((d.total || d.present === "1") && window.visattnScrolled !== seen) {
    window.visattnScrolled = seen;
    let moved = false, tries = 0, settled = 0;
    const stop = () => { moved = true; };
    window.addEventListener("wheel", stop, { once: true, passive: true });
    window.addEventListener("touchmove", stop, { once: true, passive: true });
    const target = () => {
      const all = Array.from(document.querySelectorAll('[data-testid="stMain"] '
        + '[class*="st-key-chart_"]')).filter((b) => b.getBoundingClientRect().height > 0);
      const named = d.figure ? all.find((b) => b.classList.contains("st-key-" + d.figure))
        : null;
      return named || (d.figure && tries < 40 ? null : all[0]);
    };
    const seek = () => {
      const box = moved ? null : target();
      if (box && box.querySelector(".js-plotly-plot .main-svg")) {
        box.scrollIntoView({ block: "start" });
        if (++settled < 4) setTimeout(seek, 600);
        return;
      }
      if (!moved && ++tries < 300) setTimeout(seek, 200);
    };
    seek();
  }
  const go = (where) => {
    const now = data();
    const href = now && (where === "next" ? now.dataset.next : now.dataset.prev);
    if (href) location.assign(href);
    return Boolean(href);
  };
  const channel = window.visattnChannel
    || ("BroadcastChannel" in window ? new BroadcastChannel("visattn-lecture") : null);
  // moved: this tab has just opened a step (a speaker on another tour follows it); a reply to
  // "where" is not a move (so two projectors on two tours never pull a speaker back and forth)
  const announce = (moved) => {
    const now = data();
    if (channel && now && now.dataset.total) {
      channel.postMessage({ type: "at", tour: now.dataset.tour, step: Number(now.dataset.step),
        moved });
    }
  };
  if (channel && !window.visattnChannel) {
    window.visattnChannel = channel;
    channel.onmessage = (m) => {
      const now = data();
      if (!m.data || !now) return;
      if (m.data.type === "go" && m.data.tour === now.dataset.tour) go(m.data.to);
      if (m.data.type === "where") announce(false);
    };
  }
  announce(true);
  if (window.visattnKeys) return;
  window.visattnKeys = true;
  const busy = 'input, textarea, select, [role="slider"], [role="combobox"], [contenteditable]';
  window.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || !data() || !data().dataset.total) return;
    if (e.target instanceof Element && e.target.closest(busy)) return;
    const next = ["ArrowRight", "PageDown", " "].includes(e.key);
    const prev = ["ArrowLeft", "PageUp"].includes(e.key);
    if ((next || prev) && go(next ? "next" : "prev")) e.preventDefault();
  }, true);
})();"""


def _bare_link(tour: Tour, number: int, page_id: str) -> str:
    """Where a link that names only the tour (``?tour=intro``, ``&step=N``) must go: the step's own
    view, once per session; "" when this is it (or the URL holds a view of its own, such as a step
    the lecturer changed and reloaded)."""
    if st.session_state.get("_lecture_opened"):
        return ""
    st.session_state["_lecture_opened"] = True
    step = tour.step(number)
    if step.page not in BY_ID or any(k not in lecture.LECTURE_KEYS for k in st.query_params):
        return ""  # no page to open (the bar says so), or a view of its own
    own = [k for k in step.params() if k not in lecture.LECTURE_KEYS]  # not lang=zh alone
    return step_href(tour, number) if step.page != page_id or own else ""


def bar(page_id: str) -> None:
    """At the top of the page: the tour's counter, the step's title and Prev/Next (nothing without a
    tour but, on a projector, the script that opens the page on its first figure)."""
    tour = current()
    present = "1" if st.session_state.get("present") else "0"
    if tour is None or not len(tour):
        if present == "1":
            st.html(
                _BAR_HTML.format(
                    figure="",
                    present=present,
                    prev="",
                    next="",
                    tour="",
                    step="",
                    total="",
                    open="",
                    bar="",
                    script=BAR_SCRIPT,
                ),
                unsafe_allow_javascript=True,
            )
        return
    number = step_number(tour)
    prev = step_href(tour, number - 1) if number > 1 else ""
    next_ = step_href(tour, number + 1) if number < len(tour) else ""
    step = tour.step(number)
    if step.page not in BY_ID:
        st.warning(t("lecture.step_no_page", n=number, page=escape(step.page)))
    visible = _BAR_VISIBLE.format(
        label=html.escape(t("lecture.bar_label")),
        prev=html.escape(prev or "#"),
        next=html.escape(next_ or "#"),
        prev_off="" if prev else " off",
        next_off="" if next_ else " off",
        prev_dis="false" if prev else "true",
        next_dis="false" if next_ else "true",
        prev_word=html.escape(t("lecture.prev")),
        next_word=html.escape(t("lecture.next")),
        counter=html.escape(t("lecture.counter", n=number, total=len(tour))),
        title=html.escape(title(tour, step)),
    )
    st.html(
        _BAR_HTML.format(
            figure=html.escape(step.figure),
            present=present,
            prev=html.escape(prev),
            next=html.escape(next_),
            tour=html.escape(tour_param(tour)),
            step=number,
            total=len(tour),
            open=html.escape(_bare_link(tour, number, page_id)),
            bar=visible,
            script=BAR_SCRIPT,
        ),
        unsafe_allow_javascript=True,
    )


# --- the sidebar's tour editor ----------------------------------------------------------------
def _store(tour: Tour, number: int) -> None:
    """Keep ``tour`` (packed) and its current step in the session, and so in the URL; a tour that no
    longer fits in one link is refused, the last one kept."""
    try:
        packed = tour_param(tour) if len(tour) else ""
    except InputError as exc:
        st.session_state["_lecture_error"] = exc
        return
    st.session_state[lecture.TOUR.key] = packed
    st.session_state[lecture.STEP.key] = min(max(number, 1), max(len(tour), 1))


def _own(tour: Tour | None) -> Tour:
    """The tour as the lecturer's own (a built-in tour's texts in the page's language), to edit."""
    if tour is None:
        return Tour()
    if not tour.builtin:
        return tour
    return Tour(tuple(Step(s.page, s.query, s.figure, t(s.title), t(s.notes)) for s in tour.steps))


def add_view(page_id: str, figure: str, query: str) -> None:
    """After the current step, a step of this view: ``query`` is its address's, as the browser has
    it (the positions of the controls drawn in figures are there alone; ui.address), less the
    lecture's own parameters; ``figure`` the chart it opens on."""
    tour = current()
    number = step_number(tour) if tour is not None and len(tour) else 0
    try:
        if len(query) > MAX_QUERY * 4:  # a view is at most MAX_QUERY once the lecture's go
            raise InputError("tour_view_long", "a step's view is too long", limit=MAX_QUERY)
        params = dict(parse_qsl(query, keep_blank_values=True))
        step = Step(page_id, view_query(params, lecture.LECTURE_KEYS), figure)
        _store(_own(tour).add(step, after=number), number + 1)
    except InputError as exc:
        st.session_state["_lecture_error"] = exc


def _edit(number: int) -> None:
    try:
        edited = _own(current()).edit(
            number, st.session_state["lec_title"], st.session_state["lec_notes"]
        )
    except InputError as exc:
        st.session_state["_lecture_error"] = exc
        return
    _store(edited, number)


def _move(number: int, by: int) -> None:
    _store(_own(current()).move(number, by), number + by)


def _delete(number: int) -> None:
    _store(_own(current()).delete(number), number)


def _end() -> None:
    st.session_state[lecture.TOUR.key] = ""
    st.session_state[lecture.STEP.key] = lecture.STEP.default


def _fill_editor(tour: Tour, number: int) -> None:
    """The title and notes boxes hold the current step's texts whenever the step (or the tour)
    changes."""
    memo = (tour_param(tour), number, lang())
    if st.session_state.get("_lec_editing") != memo:
        step = tour.step(number)
        st.session_state["lec_title"] = title(tour, step)
        st.session_state["lec_notes"] = notes(tour, step)
        st.session_state["_lec_editing"] = memo


def link(text: str, href: str, new_tab: bool = False) -> None:
    """A plain link (no script) to ``href``, in this tab or a new one."""
    target = ' target="_blank" rel="noopener"' if new_tab else ' target="_self"'
    st.html(f'<a class="visattn-go" href="{html.escape(href)}"{target}>{html.escape(text)}</a>')


def figure_names() -> dict[str, str]:
    """{chart key: what the figure select shows}: the page's first figure, then each chart by its
    title as drawn (in the page's language), numbered when two read alike or one has none."""
    names = {"": t("lecture.figure_first")}
    for number, (key, fig) in enumerate(charts().items(), start=1):
        title = str(fig.layout.title.text or "")
        for tag, mark in _MARKS.items():
            title = title.replace(tag, mark)
        title = _TAG.sub("", title).strip()
        if not title or title in names.values():
            title = t("lecture.figure_n", n=number, title=title).strip()
        names[key] = title
    return names


def panel(page_id: str) -> None:
    """The tour in the sidebar: start the built-in one, add this view, edit the current step (title,
    notes, place, delete), download the tour, open the speaker view."""
    error = st.session_state.pop("_lecture_error", None)
    if error is not None:
        show_error(error)
    tour = current()
    names = figure_names()
    figure = st.selectbox(
        t("lecture.figure"),
        list(names),
        format_func=names.get,  # a dict of this run's words: no t() outside the run
        key="lec_figure",
        help=t("lecture.figure_help"),
    )
    address.button(
        "＋ " + t("lecture.add_view"), "lec_add", partial(add_view, page_id, figure or "")
    )
    if tour is None or not len(tour):
        link(t("lecture.start_intro"), step_href(lecture.INTRO, 1))
        return
    number = step_number(tour)
    st.markdown(escape(t("lecture.counter", n=number, total=len(tour))))
    _fill_editor(tour, number)
    with st.form("lec_edit", border=False):
        st.text_input(t("lecture.title"), key="lec_title", max_chars=MAX_TITLE)
        st.text_area(t("lecture.notes"), key="lec_notes", max_chars=MAX_NOTES)
        st.form_submit_button(t("lecture.save"), on_click=_edit, args=(number,))
    earlier, later, delete = st.columns(3)
    earlier.button(
        "↑",
        on_click=_move,
        args=(number, -1),
        disabled=number == 1,
        key="lec_up",
        help=t("lecture.earlier"),
    )
    later.button(
        "↓",
        on_click=_move,
        args=(number, 1),
        disabled=number == len(tour),
        key="lec_down",
        help=t("lecture.later"),
    )
    delete.button(
        ":material/delete:",
        on_click=_delete,
        args=(number,),
        key="lec_delete",
        help=t("lecture.delete"),
    )
    link(t("lecture.speaker_open"), step_href(tour, number, speaker=True), new_tab=True)
    st.download_button(
        t("lecture.download"),
        to_json(_own(tour)),
        file_name="visattn_tour.json",
        mime="application/json",
        key="lec_json",
        icon=":material/download:",
    )
    st.button(t("lecture.end"), on_click=_end, key="lec_end")


def keep() -> dict[str, str]:
    """The tour's parameters, kept by the sidebar's page links."""
    text = st.session_state.get(lecture.TOUR.key, "")
    if not text:
        return {}
    return {
        lecture.TOUR.key: text,
        lecture.STEP.key: str(st.session_state.get(lecture.STEP.key, 1)),
    }


# --- the speaker view (a second tab, on the lecturer's screen) -----------------------------------
_SPEAKER_HTML = """<div id="visattn-speaker" class="visattn-speaker" data-steps="{steps}"
data-step="{step}" data-tour="{tour}" data-lang="{lang}" data-counter="{counter}"
data-next-word="{next_word}" data-last="{last}">
<div class="visattn-sp-top"><span class="visattn-sp-count">{counter_now}</span>
<span class="visattn-sp-clock" aria-label="{clock}"></span>
<span class="visattn-sp-elapsed" aria-label="{elapsed}"></span></div>
<h2 class="visattn-sp-title">{title}</h2>
<div class="visattn-sp-notes">{notes}</div>
<div class="visattn-sp-next">{next_line}</div>
<div class="visattn-sp-buttons">
<button type="button" class="visattn-go" data-go="prev">◀ {prev}</button>
<button type="button" class="visattn-go" data-go="next">{next} ▶</button></div>
</div><script>{script}</script>"""
SPEAKER_STYLE = """.visattn-speaker { font-size: 1.1rem; }
.visattn-sp-top { display: flex; gap: 1.5rem; font-weight: 600; }
.visattn-sp-clock, .visattn-sp-elapsed { font-variant-numeric: tabular-nums; }
.visattn-sp-notes { white-space: pre-wrap; font-size: 1.35rem; line-height: 1.5;
  padding: 0.8rem 1rem; border-radius: 0.5rem; background: rgba(128,128,128,0.08); }
.visattn-sp-next { margin-top: 1rem; opacity: 0.75; }
.visattn-sp-buttons { margin-top: 1rem; display: flex; gap: 1rem; }
.visattn-sp-buttons .visattn-go { font-size: 1.1rem; background: transparent; cursor: pointer; }"""
# Static: the steps' titles and notes come from the data attribute and are set as text. It follows
# the projector tab (each step it opens says where it is) and drives it (its buttons, and a
# clicker's keys on this tab, ask the projector to move); a clock and the time since it opened.
SPEAKER_SCRIPT = r"""(() => {
  const el = document.getElementById("visattn-speaker");
  if (!el) return;
  const d = el.dataset, steps = JSON.parse(d.steps);
  let step = Number(d.step);
  const put = (cls, text) => { el.querySelector(cls).textContent = text; };
  const draw = () => {
    const now = steps[step - 1] || { title: "", notes: "" };
    put(".visattn-sp-count", d.counter.replace("{n}", step).replace("{total}", steps.length));
    put(".visattn-sp-title", now.title);
    put(".visattn-sp-notes", now.notes);
    const next = steps[step];
    put(".visattn-sp-next", next ? d.nextWord.replace("{title}", next.title) : d.last);
  };
  const started = Date.now();
  const two = (n) => String(n).padStart(2, "0");
  const tick = () => {
    const t = new Date(), s = Math.floor((Date.now() - started) / 1000);
    put(".visattn-sp-clock", `${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`);
    put(".visattn-sp-elapsed", `+${two(Math.floor(s / 60))}:${two(s % 60)}`);
  };
  clearInterval(window.visattnClock);
  window.visattnClock = setInterval(tick, 1000);
  tick();
  draw();
  if (!("BroadcastChannel" in window)) return;
  if (window.visattnSpeaker) window.visattnSpeaker.close();
  const channel = window.visattnSpeaker = new BroadcastChannel("visattn-lecture");
  channel.onmessage = (m) => {
    if (!m.data || m.data.type !== "at") return;
    if (m.data.tour !== d.tour) {
      if (!m.data.moved) return;  // another tour's tab answering "where": not ours to follow
      const u = new URL(location.href);
      u.search = new URLSearchParams({ speaker: "1", lang: d.lang, tour: String(m.data.tour),
        step: String(m.data.step) }).toString();
      location.assign(u.toString());
      return;
    }
    step = Number(m.data.step);
    el.dataset.step = String(step);
    draw();
  };
  const go = (to) => channel.postMessage({ type: "go", to, tour: d.tour });
  el.querySelectorAll("[data-go]").forEach((b) => { b.onclick = () => go(b.dataset.go); });
  if (!window.visattnSpeakerKeys) {
    window.visattnSpeakerKeys = true;
    window.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey || !window.visattnSpeaker) return;
      const next = ["ArrowRight", "PageDown", " "].includes(e.key);
      const prev = ["ArrowLeft", "PageUp"].includes(e.key);
      const here = document.getElementById("visattn-speaker");
      if ((next || prev) && here) {
        e.preventDefault();
        window.visattnSpeaker.postMessage({ type: "go", to: next ? "next" : "prev",
          tour: here.dataset.tour });
      }
    }, true);
  }
  channel.postMessage({ type: "where" });
})();"""


def speaker_view() -> None:
    """The speaker view: the current step's notes, the next step's title, a clock; it follows the
    projector tab and moves it (never through the server: the tabs talk in the browser)."""
    st.title(t("lecture.speaker_title"))
    tour = current()
    if tour is None or not len(tour):
        st.info(t("lecture.speaker_none"))
        return
    st.caption(t("lecture.speaker_help"))
    number = step_number(tour)
    steps = [{"title": title(tour, s), "notes": notes(tour, s)} for s in tour.steps]
    following = steps[number] if number < len(steps) else None
    counter = t("lecture.counter", n="{n}", total="{total}")
    next_word = t("lecture.speaker_next", title="{title}")
    next_line = next_word.replace("{title}", following["title"]) if following else ""
    st.html(
        _SPEAKER_HTML.format(
            steps=html.escape(json.dumps(steps, ensure_ascii=False)),
            step=number,
            tour=html.escape(tour_param(tour)),
            lang=html.escape(lang()),
            counter=html.escape(counter),
            next_word=html.escape(next_word),
            last=html.escape(t("lecture.speaker_last")),
            counter_now=html.escape(t("lecture.counter", n=number, total=len(tour))),
            clock=html.escape(t("lecture.speaker_clock")),
            elapsed=html.escape(t("lecture.speaker_elapsed")),
            title=html.escape(steps[number - 1]["title"]),
            notes=html.escape(steps[number - 1]["notes"]),
            next_line=html.escape(next_line or t("lecture.speaker_last")),
            prev=html.escape(t("lecture.prev")),
            next=html.escape(t("lecture.next")),
            script=SPEAKER_SCRIPT,
        ),
        unsafe_allow_javascript=True,
    )


SCRIPTS = (BAR_SCRIPT, SPEAKER_SCRIPT)  # this module's inline scripts (deploy/csp.py: by hash)
