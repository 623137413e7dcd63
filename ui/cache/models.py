"""The model picker: which checkpoints this server offers (:mod:`visattn.models.sources`, found once
per server), the one a session chose (its id in the URL, never a path), loaded once per server.

The bundled MiniLM is :func:`ui.cache.pretrained.load_model` (shared with the pages that know only
it); any other checkpoint is :func:`load_checkpoint`, which keeps the two last used (a model is its
weights in float32, up to the budget each). Folders come from ``VISATTN_MODELS`` and from
``--models DIR`` after the script's name (``make run MODELS=DIR`` runs ``streamlit run app.py --
--models DIR``). A failed load is not cached: the page shows the translated reason and MiniLM stays
usable."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

import streamlit as st

from visattn.controls import Control
from visattn.display import layer_mechanisms, layer_name, map_mechanisms
from visattn.errors import InputError
from visattn.models import load
from visattn.models import sources as model_sources
from visattn.models.encoder import ModelNotInstalled, model_dir
from visattn.models.sources import BUNDLED, Source

from .. import reading_selector, url_state, widgets
from ..errors import message
from ..i18n import label, t
from ..text import escape
from .pretrained import load_model, model_or_error


def model_dirs(argv: list[str]) -> list[str]:
    """The folders named by ``--models DIR`` (any number of times) among the script's
    arguments."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--models", action="append", default=[])
    known, _ = parser.parse_known_args(argv)
    return known.models


@st.cache_resource(show_spinner=False)
def available() -> tuple[Source, ...]:
    """Every checkpoint of this server, described without loading (a directory scan, once)."""
    try:
        bundled = model_dir()
    except ModelNotInstalled:
        bundled = None
    return tuple(model_sources.find(model_dirs(sys.argv[1:]), bundled=bundled))


def by_id() -> Mapping[str, Source]:
    return {source.id: source for source in available()}


@st.cache_resource(max_entries=2, show_spinner=False)
def load_checkpoint(id: str):
    """The checkpoint ``id`` in NumPy (InputError when its folder cannot be read: not cached)."""
    return load(by_id()[id].path)


def without_path(exc: Exception, source: Source) -> Exception:
    """A load's refusal naming its file under the model's name, never by the server's path."""
    if isinstance(exc, InputError):
        return model_sources.shown(exc, source.path, source.name)
    return exc


def size_text(n_bytes: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n_bytes >= size:
            return f"{n_bytes / size:.1f} {unit}"
    return f"{n_bytes} B"


def option_text(id: str) -> str:
    """A picker entry: name · family · layers × heads · size."""
    source = by_id()[id]
    return t(
        "models.option",
        name=source.name,
        family=label("models.families", source.family),
        layers=source.n_layers,
        heads=source.n_heads,
        size=size_text(source.disk_bytes),
    )


def refused() -> InputError | None:
    """Why this server lists no checkpoint at all (a budget it cannot read), or None."""
    try:
        available()
    except InputError as exc:  # raised before any folder is read: nothing cached
        return exc
    return None


def found_or_refused() -> list[Source]:
    """Every checkpoint of this server, or none with the one message saying why."""
    problem = refused()
    if problem is not None:
        st.error(message(problem), icon=":material/block:")
        return []
    return list(available())


def why_not(source: Source) -> str:
    """Why ``source`` cannot be chosen, translated: what it could not read, or its size and the
    budget."""
    if source.problem is not None:
        return message(source.problem)
    budget = size_text(model_sources.budget_bytes())
    return t("models.over_budget", size=size_text(source.float32_bytes), budget=budget)


def greyed(sources: list[Source]) -> None:
    """The checkpoints that cannot be chosen, each with its reason, in grey."""
    for source in sources:
        why = why_not(source)
        st.caption(t("models.greyed", name=escape(source.name), why=why))  # why: escaped


def listed(wanted: str, found: list[Source]) -> Source | None:
    """The source a link asked for when the server lists it (though it cannot load it)."""
    return next((source for source in found if source.id == wanted), None)


def choose(control: Control):
    """The picker (when the server has more than the bundled model) → (model or None, the reason
    it is None, its Source or None). An id the server does not have, or cannot load, falls back
    to MiniLM with one notice saying why."""
    found = found_or_refused()
    usable = [s.id for s in found if s.usable]
    wanted = st.session_state.get(control.key, control.default)
    asked = None  # the listed model a link asked for and cannot have: its notice says why
    if wanted not in usable:
        # MiniLM, else the first usable; with none usable, MiniLM read as the bundled package
        fallback = control.default if control.default in usable or not usable else usable[0]
        st.session_state[control.key] = fallback
        if wanted != control.default and found:
            listed_ids = by_id()
            shown = listed_ids[fallback].name if fallback in listed_ids else "MiniLM"
            asked = listed(wanted, found)
            if asked is None:
                notice = t("models.unknown", id=escape(str(wanted)), shown=escape(shown))
            else:  # one true notice: why it cannot be shown
                why = why_not(asked)
                notice = t("models.unusable", name=escape(asked.name), why=why, shown=escape(shown))
            st.warning(notice, icon=":material/search_off:")
        if not usable:
            model, reason = model_or_error()
            return model, reason, None
    if len(found) > 1:
        widgets.select(
            control,
            t("models.pick"),
            options=usable,
            format_func=option_text,
            help=t("models.pick_help"),
        )
        greyed([s for s in found if not s.usable and s != asked])
    source = by_id()[st.session_state[control.key]]
    if source.id == BUNDLED:
        model, reason = model_or_error()
        return model, reason, source
    try:
        with st.spinner(t("pretrained.loading")):
            return load_checkpoint(source.id), None, source
    except (OSError, ValueError) as exc:  # an InputError naming the file, translated
        # (the picker keeps the choice: its widget is drawn, and the link still names the model)
        st.error(
            t("models.failed", name=escape(source.name), why=message(without_path(exc, source)))
        )
        model, reason = model_or_error()
        return model, reason, by_id().get(BUNDLED)


def describe(source: Source | None, model=None) -> None:
    """One line on the model shown; for a decoder what its maps are, for a RoPE model where its
    positions are (and on which layers), and what its family adds that changes the maps."""
    if source is None:
        return
    if len(available()) == 1:  # no picker drawn: say which model this is
        st.caption(option_text(source.id))
    if source.causal:
        st.info(t("models.causal"), icon=":material/south_east:")
    if source.family == "llama":
        rope_layers = getattr(getattr(model, "config", None), "rope_layers", ())
        without = [layer_name(i) for i, rotated in enumerate(rope_layers) if not rotated]
        if without:
            st.caption(t("models.rotary_some", layers=t("pretrained.list_sep").join(without)))
        else:
            st.caption(t("models.rotary"))
    if model is not None:
        mechanisms(model)


def mechanisms(model) -> None:
    """One sentence for each mechanism the model's family adds that changes its maps
    (:data:`visattn.display.MAP_MECHANISMS`, read from its config's ``mechanisms``)."""
    names = getattr(model.config, "mechanisms", ())
    for name, kind in map_mechanisms(names):
        st.caption(label("models.mechanisms", name, kind=kind))


def layer_notes(model, layer: int) -> None:
    """Under a layer's map: what changes that layer's maps (no RoPE there, its window, its
    soft-cap, its sinks), one translated sentence each."""
    for name, numbers in layer_mechanisms(model, layer):
        st.caption(label("models.layer_mechanisms", name, layer=layer_name(layer), **numbers))


def fit_choice(control: Control, n: int) -> range:
    """The options of a layer or head control cut to a model's ``n``; a session value beyond them
    goes back to the control's default (or the last) and the URL notice names it."""
    options = range(n)
    value = st.session_state.get(control.key, control.default)
    if value not in options:
        st.session_state[control.key] = control.default if control.default < n else n - 1
        if value != control.default:  # the link asked for it; a default too big is no news
            url_state.notices().append(control.key)
    return options


def picker(
    control: Control, layer_controls: tuple[Control, ...], head_controls: tuple[Control, ...]
):
    """The model picker of the pretrained and reading pages: the model chosen by ``control`` (its
    id in the URL), one line on it, and the layer and head controls cut to its size; None (the
    install command shown) when no model can be loaded."""
    with st.spinner(t("pretrained.loading")):
        model, reason, source = choose(control)
    if model is None:
        reading_selector.model_missing(reason)
        return None
    describe(source, model)
    for layer_control in layer_controls:
        fit_choice(layer_control, model.config.n_layers)
    for head_control in head_controls:
        fit_choice(head_control, model.config.n_heads)
    return model


__all__ = ["choose", "describe", "fit_choice", "load_checkpoint", "load_model", "picker"]


def choose_decoder(control: Control):
    """The training page's decoder picker → (model, its Source), or (None, None) when the server
    has no usable decoder (said here: which decoders are above the budget, or that it has none).
    An id it does not have, or cannot load, falls back to its first decoder with one notice."""
    problem = refused()
    if problem is not None:
        st.error(message(problem), icon=":material/block:")
        return None, None
    found = [s for s in available() if s.causal or s.problem is not None]
    decoders = [s.id for s in found if s.usable]
    if not decoders:
        no_decoder([s for s in found if s.causal])
        return None, None
    wanted = st.session_state.get(control.key, control.default)
    if wanted not in decoders:
        if wanted != control.default:
            asked = listed(wanted, found)
            if asked is None:
                notice = t("models.unknown_decoder", id=escape(str(wanted)))
            else:
                notice = t("models.unusable_decoder", name=escape(asked.name), why=why_not(asked))
            st.warning(notice, icon=":material/search_off:")
        st.session_state[control.key] = decoders[0]
    widgets.select(control, t("models.dec_pick"), options=decoders, format_func=option_text)
    source = by_id()[st.session_state[control.key]]
    try:
        with st.spinner(t("pretrained.loading")):
            return load_checkpoint(source.id), source
    except (OSError, ValueError) as exc:
        st.error(
            t("models.dec_failed", name=escape(source.name), why=message(without_path(exc, source)))
        )
        return None, None


def no_decoder(over: list[Source]) -> None:
    """Why no decoder is offered: the decoders this server has above its budget, each with its
    size, or (none) that it has no decoder checkpoint."""
    if not over:
        st.caption(t("models.dec_none"))  # a note, not a problem: the section above shows it all
        return
    sizes = [
        t("models.dec_size", name=escape(s.name), size=size_text(s.float32_bytes)) for s in over
    ]
    budget = size_text(model_sources.budget_bytes())
    st.warning(
        t("models.dec_over_budget", decoders=t("common.list_sep").join(sizes), budget=budget),
        icon=":material/memory:",
    )


@st.cache_data(max_entries=32, show_spinner=False)
def generate(id: str, prompt: str, n_new: int):
    """The decoder ``id``'s greedy continuation of ``prompt`` (the training page's last section)."""
    from visattn.lessons import training as training_lesson

    return training_lesson.generate(load_checkpoint(id), prompt, n_new)


@st.cache_data(max_entries=8, show_spinner=False)
def induction_heads(id: str):
    """The decoder ``id``'s heads with the highest prefix-matching score."""
    from visattn.lessons import training as training_lesson

    return training_lesson.induction_heads(load_checkpoint(id))
