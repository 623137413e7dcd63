"""Links made before the pages were rewritten as lessons (issue 20) open the same views today.

``fixtures/links_5988806.json`` was written by ``make_link_fixtures.py`` from a checkout of commit
5988806: per page, three links that each change a third of the page's URL parameters to another
valid value (one in Chinese), and one in presenter mode; with, for each, the URL the page wrote back
and how many warnings, errors and charts it drew. Replaying them here checks that every parameter
still means what it meant (a parameter dropped, renamed or re-bounded changes the written-back URL
or raises a "settings reset" warning)."""

import json
from pathlib import Path

import pytest
from apptest_util import TABS, assert_clean, charts, panel, run_page, warnings

LINKS = json.loads((Path(__file__).parent / "fixtures" / "links_5988806.json").read_text("utf-8"))
# 5988806 drew every tab of the kernel page at once, as every tabbed page does today
# (ui.frame.tabs); its positional page drew only the chosen section, which is a tab's panel today
ONE_SECTION = {"positional"}


def link_id(link: dict) -> str:
    return f"{link['page']}-{len(link['params'])}-{'zh' if link['params'].get('lang') else 'en'}"


def written_back(at) -> dict:
    url = {k: at.query_params[k] for k in at.query_params}
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in url.items()}


@pytest.mark.parametrize("link", LINKS, ids=[link_id(link) for link in LINKS])
def test_an_old_link_opens_the_same_view(link):
    at = run_page(link["page"], link["params"])
    assert_clean(at)
    assert written_back(at) == link["url"]
    assert len(warnings(at)) == link["warnings"]
    assert len(at.error) == link["errors"]
    # 5988806 drew with the page what ui.frame.when_open draws only while open (its expanders are
    # the keyed ones): the same link, those open, draws as many charts
    opened = {expander.key: True for expander in at.expander if expander.key}
    at = run_page(link["page"], link["params"], state=opened)
    assert_clean(at)
    if link["page"] in ONE_SECTION:
        at = panel(at, link["page"], at.session_state[TABS[link["page"]].key])
    assert len(charts(at)) == link["charts"]
