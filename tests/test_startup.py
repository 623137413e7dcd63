"""Startup: the first page of a visit warms the pretrained page's caches once per server, in a
background thread, and a page that asks while the thread is still loading waits for that one load
(a first visitor never pays for the warm-up twice)."""

from __future__ import annotations

import gc
import json
import logging
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import pytest
import streamlit as st
from apptest_util import assert_clean, run_page

from ui.cache import pretrained as cache_pretrained
from ui.room import budget, warm
from visattn.lessons import pretrained as lesson
from visattn.models.encoder import BertEncoder

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def counted(monkeypatch):
    """Counts of BertEncoder.load and of the Winograd lesson, with every cache of the pretrained
    page empty."""
    calls = {"load": 0, "winograd": 0}
    load, winograd = BertEncoder.load.__func__, lesson.winograd

    def counting_load(cls, *args, **kwargs):
        calls["load"] += 1
        return load(cls, *args, **kwargs)

    def counting_winograd(model):
        calls["winograd"] += 1
        return winograd(model)

    monkeypatch.setattr(BertEncoder, "load", classmethod(counting_load))
    monkeypatch.setattr(lesson, "winograd", counting_winograd)
    for fn in (cache_pretrained.load_model, cache_pretrained.winograd):
        fn.clear()
    budget.shared().clear()  # the runs are kept by the replica's budget
    yield calls
    for fn in (cache_pretrained.load_model, cache_pretrained.winograd):
        fn.clear()
    budget.shared().clear()


def warm_up_threads() -> list[threading.Thread]:
    return [th for th in threading.enumerate() if th.name == warm.THREAD_NAME]


def test_warm_up_fills_the_caches_the_page_reads(counted):
    thread = threading.Thread(target=cache_pretrained.warm_up)
    thread.start()
    model, reason = (
        cache_pretrained.model_or_error()
    )  # asked while the thread loads: waits for the same load
    thread.join()
    assert reason is None and isinstance(model, BertEncoder)
    assert counted == {"load": 1, "winograd": 1}
    again, _ = cache_pretrained.model_or_error()
    run = cache_pretrained.run_text(again, lesson.SENTENCE)
    assert again is model and cache_pretrained.winograd(again) is cache_pretrained.winograd(model)
    assert run is cache_pretrained.run_text(model, lesson.SENTENCE) and run.text == lesson.SENTENCE
    assert counted == {"load": 1, "winograd": 1}  # nothing was computed twice


def test_the_warm_up_takes_what_it_loaded_out_of_the_full_collections(counted):
    """Streamlit collects garbage fully after every run; the warm-up freezes the libraries and
    MiniLM (gc.freeze), and what is made later is still collected."""

    class Node:
        pass

    gc.unfreeze()
    try:
        warm._warm_up()
        assert counted["load"] == 1
        assert gc.get_freeze_count() > 50_000  # Plotly, pandas, NumPy, Streamlit, visattn, …
        cycle = Node()
        cycle.self = cycle
        alive = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert alive() is None
    finally:
        gc.unfreeze()


def test_the_warm_up_logs_nothing(counted):
    """A start is quiet: the warm-up thread, which has no page, logs no warning (it said "Thread
    'visattn-warm-up': missing ScriptRunContext!" at every start)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    # Streamlit's loggers do not propagate: every one of them, as set up by now
    streamlit_loggers = [
        logging.getLogger(name)
        for name in list(logging.Logger.manager.loggerDict)
        if name.startswith("streamlit")
    ]
    for logger in streamlit_loggers:
        logger.addHandler(handler)
    try:
        thread = threading.Thread(target=warm._warm_up, name=warm.THREAD_NAME)
        thread.start()
        thread.join()
    finally:
        for logger in streamlit_loggers:
            logger.removeHandler(handler)
        gc.unfreeze()
    assert counted["load"] == 1
    assert [r.getMessage() for r in records] == []


def test_home_page_starts_the_warm_up_once(counted):
    st.cache_resource.clear()  # ui.room.warm's starter too: a fresh "server"
    for _ in range(2):
        at = run_page("home")
        assert_clean(at)
        for th in warm_up_threads():
            th.join()
    assert counted == {"load": 1, "winograd": 1}
    model, _ = cache_pretrained.model_or_error()  # the pretrained page then finds the model ready
    cache_pretrained.winograd(model)
    assert counted == {"load": 1, "winograd": 1}


def test_pretrained_page_after_the_warm_up_computes_nothing_again(counted):
    cache_pretrained.warm_up()
    at = run_page("pretrained")
    assert_clean(at)
    assert counted == {"load": 1, "winograd": 1}


def test_package_imports_lazily_and_exports_the_same_objects():
    code = (
        "import json, sys, visattn; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('visattn.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == [
        "visattn.activations",
        "visattn.attention",
        "visattn.checks",
        "visattn.errors",
    ]
    import visattn
    from visattn import attention as attention_fn
    from visattn import (
        decode,
        kernel_regression,
        modern_attention,
        positional_encoding,
        reading,
        text,
    )
    from visattn.models import designed

    assert callable(attention_fn) and attention_fn is sys.modules["visattn.attention"].attention
    for name in visattn.__all__:
        value = getattr(visattn, name)
        if name in (
            "designed",
            "positional_encoding",
            "scaling",
            "scoring",
            "shapes",
        ):  # the modules themselves
            assert value is (designed if name == "designed" else sys.modules[f"visattn.{name}"])
            continue
        modules = [
            m
            for m in (
                sys.modules["visattn.attention"],
                sys.modules["visattn.activations"],
                decode,
                kernel_regression,
                modern_attention,
                positional_encoding,
                reading,
                text,
            )
            if hasattr(m, name)
        ]
        assert modules and value is getattr(modules[0], name), name
    assert set(visattn.__all__) <= set(dir(visattn))
    with pytest.raises(AttributeError):
        visattn.no_such_name  # noqa: B018
