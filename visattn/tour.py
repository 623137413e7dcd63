"""A lecture's path through the views: a :class:`Tour` is an ordered list of :class:`Step`, a step
is one view (a page and the query of its link), the figure it opens on, a title and speaker notes.

No Streamlit here. A tour travels whole in one URL parameter (``tour=``): :func:`to_link` packs it
(compact JSON, zlib, base64url) and :func:`from_link` unpacks and checks it; :func:`to_json` and
:func:`from_json` are the readable file a lecturer downloads. Everything read is bounded: the number
of steps, a title's and a note's length, a view's query, the packed link itself; a tampered tour
raises :class:`visattn.errors.InputError`, never anything else. The built-in tours name their
titles and notes by locale key (``visattn.lecture``); a lecturer's tour holds their own
words, which the app escapes wherever it shows them.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Collection
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode

from .controls import MAX_TEXT
from .errors import InputError

MAX_STEPS = 30  # steps of one tour
MAX_TITLE = 80  # characters of a step's title
MAX_NOTES = 800  # characters of a step's speaker notes
MAX_QUERY = 3000  # characters of a step's view (its link's query)
MAX_LINK = MAX_TEXT  # characters of the packed tour in the URL (a text parameter's limit)
MAX_JSON = 200_000  # characters of a tour file, or of a packed tour unpacked
MAX_DEPTH = 3  # nesting of a tour's JSON: a file {steps: [{…}]}, a link [[…]]
LINK_PREFIX = "t1."  # the packed form's version
_PAGE = re.compile(r"[a-z_]{1,40}")
_FIGURE = re.compile(r"[A-Za-z0-9_-]{0,120}")
_KEY = re.compile(r"[A-Za-z0-9_]{1,40}")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')  # a JSON string, its escapes included
_BRACKETS = re.compile(r"[][{}]")


@dataclass(frozen=True)
class Step:
    """One view of a tour: ``page`` (a page id), ``query`` (its link's query, without the
    lecture's own parameters), ``figure`` (the chart it opens scrolled to; "" for the page's first
    one), ``title`` and ``notes`` (a locale key each in a built-in tour, the lecturer's words
    otherwise)."""

    page: str
    query: str = ""
    figure: str = ""
    title: str = ""
    notes: str = ""

    def params(self) -> dict[str, str]:
        """The view's query as ``{parameter: value}``."""
        return dict(parse_qsl(self.query, keep_blank_values=True))


@dataclass(frozen=True)
class Tour:
    """An ordered list of steps; ``builtin`` names a built-in tour (its texts are locale keys)."""

    steps: tuple[Step, ...] = ()
    builtin: str = ""

    def __len__(self) -> int:
        return len(self.steps)

    def step(self, number: int) -> Step:
        """Step ``number`` (1-based), held within 1 … len."""
        return self.steps[min(max(number, 1), len(self.steps)) - 1]

    def add(self, step: Step, after: int | None = None) -> Tour:
        """The tour with ``step`` added after step ``after`` (1-based; at the end when None)."""
        if len(self.steps) >= MAX_STEPS:
            raise InputError(
                "tour_full", f"a tour holds at most {MAX_STEPS} steps", limit=MAX_STEPS
            )
        at = len(self.steps) if after is None else min(max(after, 0), len(self.steps))
        checked = check_step(step)
        return Tour(self.steps[:at] + (checked,) + self.steps[at:])

    def edit(self, number: int, title: str, notes: str) -> Tour:
        """The tour with step ``number``'s title and notes replaced."""
        steps = list(self.steps)
        steps[number - 1] = check_step(replace(steps[number - 1], title=title, notes=notes))
        return Tour(tuple(steps))

    def move(self, number: int, by: int) -> Tour:
        """The tour with step ``number`` moved ``by`` places (held within the tour)."""
        steps = list(self.steps)
        to = min(max(number - 1 + by, 0), len(steps) - 1)
        steps.insert(to, steps.pop(number - 1))
        return Tour(tuple(steps))

    def delete(self, number: int) -> Tour:
        return Tour(self.steps[: number - 1] + self.steps[number:])


def view_query(params: dict[str, str], lecture_keys: Collection[str]) -> str:
    """A view's query from the URL's parameters, less the lecture's own (``lecture_keys``)."""
    return urlencode({k: v for k, v in params.items() if k not in lecture_keys})


def check_step(step: Step) -> Step:
    """``step`` if every field is within its bounds and form, else an :class:`InputError`."""
    if not _PAGE.fullmatch(step.page):
        raise InputError("tour_bad", "a step names no page")
    if not _FIGURE.fullmatch(step.figure):
        raise InputError("tour_bad", "a step's figure is not a figure name")
    if len(step.query) > MAX_QUERY:
        raise InputError("tour_view_long", "a step's view is too long", limit=MAX_QUERY)
    if not all(_KEY.fullmatch(k) for k in step.params()):
        raise InputError("tour_bad", "a step's view has a parameter that is not a name")
    if len(step.title) > MAX_TITLE:
        raise InputError("tour_title_long", "a step's title is too long", limit=MAX_TITLE)
    if len(step.notes) > MAX_NOTES:
        raise InputError("tour_notes_long", "a step's notes are too long", limit=MAX_NOTES)
    return step


# Pages that had another id when tours were first packed and saved (each page's id is now the stem
# of its address and of all its modules): a link or a file naming a page by its former id opens it.
FORMER_PAGE_IDS = {
    "kernel": "kernel_regression",
    "positional": "positional_encoding",
    "modern": "modern_attention",
}


def _current(step: Step) -> Step:
    """``step`` naming its page by today's id."""
    return replace(step, page=FORMER_PAGE_IDS.get(step.page, step.page))


def _fields(item) -> Step:
    """A step from its packed (list) or file (object) form."""
    if isinstance(item, list) and len(item) == 5 and all(isinstance(x, str) for x in item):
        return _current(check_step(Step(*item)))
    if isinstance(item, dict):
        values = {k: item.get(k, "") for k in ("page", "query", "figure", "title", "notes")}
        if all(isinstance(v, str) for v in values.values()):
            return _current(check_step(Step(**values)))
    raise InputError("tour_bad", "a step is not a step")


def _tour(items) -> Tour:
    if not isinstance(items, list):
        raise InputError("tour_bad", "a tour is a list of steps")
    if len(items) > MAX_STEPS:
        raise InputError("tour_full", f"a tour holds at most {MAX_STEPS} steps", limit=MAX_STEPS)
    return Tour(tuple(_fields(item) for item in items))


def _depth(text: str) -> int:
    """How deep ``text``'s JSON arrays and objects nest (brackets inside strings not counted), read
    without recursion: json.loads recurses once a level, and a 37-character link nests hundreds."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _parse(text: str):
    """``text`` as JSON no deeper than a tour is, else an :class:`InputError`."""
    if _depth(text) > MAX_DEPTH:
        raise InputError("tour_bad", "a tour nests deeper than steps in a list")
    try:
        return json.loads(text)
    except ValueError:
        raise InputError("tour_bad", "not a tour") from None


def to_link(tour: Tour) -> str:
    """The tour packed for the URL: ``t1.`` + base64url(zlib(compact JSON)); refused beyond
    ``MAX_LINK`` characters."""
    rows = [[s.page, s.query, s.figure, s.title, s.notes] for s in tour.steps]
    packed = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text = LINK_PREFIX + base64.urlsafe_b64encode(zlib.compress(packed, 9)).decode().rstrip("=")
    if len(text) > MAX_LINK:
        raise InputError("tour_link_long", "the tour no longer fits in one link", limit=MAX_LINK)
    return text


def from_link(text: str) -> Tour:
    """The tour of a packed link (:func:`to_link`), checked; never more than ``MAX_JSON``
    characters unpacked."""
    if len(text) > MAX_LINK or not text.startswith(LINK_PREFIX):
        raise InputError("tour_bad", "not a packed tour")
    body = text[len(LINK_PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        inflate = zlib.decompressobj()
        packed = inflate.decompress(raw, MAX_JSON + 1)
        if len(packed) > MAX_JSON or inflate.unconsumed_tail:
            raise InputError("tour_bad", "the packed tour is too large")
        text = packed.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError):
        raise InputError("tour_bad", "not a packed tour") from None
    return _tour(_parse(text))


def to_json(tour: Tour) -> str:
    """The tour as a readable file (what the lecturer downloads)."""
    steps = [
        {"page": s.page, "query": s.query, "figure": s.figure, "title": s.title, "notes": s.notes}
        for s in tour.steps
    ]
    return json.dumps({"visattn_tour": 1, "steps": steps}, ensure_ascii=False, indent=1)


def from_json(text: str) -> Tour:
    """A tour file (:func:`to_json`) read back, checked."""
    if len(text) > MAX_JSON:
        raise InputError("tour_bad", "the tour file is too large")
    data = _parse(text)
    if not isinstance(data, dict) or data.get("visattn_tour") != 1:
        raise InputError("tour_bad", "not a tour file")
    return _tour(data.get("steps"))
