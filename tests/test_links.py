"""Links made before the pages were rewritten as lessons open the same views today.

``fixtures/links_5988806.json`` was written by ``make_link_fixtures.py`` from a checkout of commit
5988806: per page, three links that each change a third of the page's URL parameters to another
valid value (one in Chinese), and one in presenter mode; with, for each, the URL the page wrote back
and how many warnings, errors and charts it drew. Replaying them here checks that every parameter
still means what it meant (a parameter dropped, renamed or re-bounded changes the written-back URL
or raises a "settings reset" warning)."""

import json
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from apptest_util import (
    TABS,
    assert_clean,
    charts,
    figures,
    follower_notes,
    panel,
    run_page,
    warnings,
)

from visattn.lessons import decoder as decoder_lesson
from visattn.lessons import training as training_lesson
from visattn.tour import FORMER_PAGE_IDS

FIXTURES = Path(__file__).parent / "fixtures"
LINKS = json.loads((FIXTURES / "links_5988806.json").read_text("utf-8"))
# and links of 47b9e2e, the last commit before the controls drawn in figures entered the URL,
# made the same way: a link made then opens the same view now
LINKS_47B9E2E = json.loads((FIXTURES / "links_47b9e2e.json").read_text("utf-8"))
# 5988806 drew every tab of the kernel page at once, as every tabbed page does today
# (ui.frame.tabs); its positional page drew only the chosen section, which is a tab's panel today
ONE_SECTION = {"positional_encoding"}


def page_of(link: dict) -> str:
    """The page a recorded link opens, by today's id (the fixtures name three pages by the ids
    they had then; their addresses were the same)."""
    return FORMER_PAGE_IDS.get(link["page"], link["page"])


def link_id(link: dict) -> str:
    return f"{link['page']}-{len(link['params'])}-{'zh' if link['params'].get('lang') else 'en'}"


def written_back(at) -> dict:
    url = {k: at.query_params[k] for k in at.query_params}
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in url.items()}


def sets_training(link: dict) -> bool:
    """A decoder link with a training value: the training was the decoder page's sections 5–6
    then, and is a page of its own now, where the decoder page sends such a link."""
    return link["page"] == "decoder" and any(k in training_lesson.CONTROLS for k in link["params"])


def opens_split(link: dict):
    """A decoder link with training values opens the training page with them and the link's other
    settings; the designed decoder's values in it are linked back to, and the decoder page opens
    with them as the link did (the training drew no chart before a run: the charts are the
    decoder page's). Returns that decoder page."""
    at = run_page("decoder", link["params"])
    assert_clean(at)
    url = link["url"]
    assert written_back(at) == {k: v for k, v in url.items() if k not in decoder_lesson.CONTROLS}
    assert len(warnings(at)) + len(follower_notes(at)) == link["warnings"]
    assert len(at.error) == link["errors"]
    designed = {k: v for k, v in url.items() if k not in training_lesson.CONTROLS}
    if designed.keys() & decoder_lesson.CONTROLS.keys():
        (back,) = [
            e.proto for e in at.get("page_link") if e.proto.icon == ":material/skip_previous:"
        ]
        query = dict(parse_qsl(back.query_string))
        assert back.page == "decoder" and query == designed | {"lang": at.session_state["lang"]}
    there = run_page("decoder", designed)
    assert_clean(there)
    assert written_back(there) == designed
    return there


def opens_as_written(link: dict):
    """The page ``link`` opens: the URL it writes back, its warnings and errors as written down
    (a warning may be a note that follows a figure's control now: no estimate at this σ)."""
    if sets_training(link):
        return opens_split(link)
    at = run_page(page_of(link), link["params"])
    assert_clean(at)
    assert written_back(at) == link["url"]
    assert len(warnings(at)) + len(follower_notes(at)) == link["warnings"]
    assert len(at.error) == link["errors"]
    return at


@pytest.mark.parametrize("link", LINKS, ids=[link_id(link) for link in LINKS])
def test_an_old_link_opens_the_same_view(link):
    at = opens_as_written(link)
    # 5988806 drew with the page what ui.frame.when_open draws only while open (its expanders are
    # the keyed ones): the same link, those open, draws as many charts
    opened = {expander.key: True for expander in at.expander if expander.key}
    at = run_page(page_of(link), link["params"], state=opened)
    assert_clean(at)
    if page_of(link) in ONE_SECTION:
        at = panel(at, page_of(link), at.session_state[TABS[page_of(link)].key])
    assert len(charts(at)) == link["charts"]


@pytest.mark.parametrize("link", LINKS_47B9E2E, ids=[link_id(link) for link in LINKS_47B9E2E])
def test_a_link_of_47b9e2e_opens_the_same_view(link):
    """The controls that moved into figures kept their keys and meanings (σ, τ, d_k, k, p, G, the
    KV-cache step): a link made before opens the same view, with as many charts."""
    at = opens_as_written(link)
    assert len(charts(at)) == link["charts"]


@pytest.mark.parametrize(
    "params,positions",
    [
        ({"mo_sec": "window", "mo_sinks": "2", "mo_wl": "3"}, {"mo_sinks": "2", "mo_wl": "3"}),
        ({"mo_sec": "window", "mo_sinks": "4", "mo_wl": "6"}, {"mo_sinks": "4", "mo_wl": "6"}),
    ],
)
def test_a_link_that_set_the_sinks_or_the_layers_before_they_left_the_url_opens_there(
    params, positions
):
    """Links of c4b30c1 and earlier set the sinks and the layers (mo_sinks, mo_wl), which left the
    URL at 47b9e2e (reported and dropped) and are back as the figures' own sliders."""
    at = run_page("modern_attention", params)
    assert_clean(at)
    assert not warnings(at) and written_back(at) == params
    shown = {
        slider["name"]: slider["steps"][slider["active"]]["value"]
        for f in figures(at)
        for slider in f["layout"].get("sliders", [])
    }
    assert {k: shown[k] for k in positions} == positions


def test_a_link_with_the_flash_query_block_is_reported():
    """mo_fqb (the FlashAttention query block, before 0131b54) has a successor, mo_fstep, the
    figure's step: the old parameter is reported, and the figure opens where the lesson does."""
    at = run_page("modern_attention", {"mo_sec": "flash", "mo_fqb": "2"})
    assert_clean(at)
    (w,) = warnings(at)
    assert "mo\\_fqb" in w and "mo_fqb" not in at.query_params
