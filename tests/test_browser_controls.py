"""Controls drawn in figures, in a real browser: dragging a figure's slider moves its
control in the browser alone — no frame goes to the server — and writes it into the address bar;
the figures that follow it move with it; the address opened in a new page shows every figure at
that position. After a change the server answers (another control), the figures stay where the
reader left them, and so does the address."""

import json

import pytest
from browser_util import (
    chromium,
    frames_sent,
    require_browser,
    settled_url_value,
    settled_value,
    streamlit_server,
    wait_rendered,
)

pytestmark = pytest.mark.browser

# page path → [(the query that opens the figure's section, the control, where to drag: a fraction
# of the slider's rail)], one case per control drawn in a figure
CASES = {
    "kernel_regression": [("kr_tab=1d", "kr_sigma", 0.8)],
    "single_head": [("sh_view=worked", "sh_temp", 0.25), ("sh_view=sqrt", "sh_vdk", 0.3)],
    "positional_encoding": [("pe_sec=relative", "pe_rk", 0.5), ("pe_sec=beyond", "pe_bp", 0.7)],
    "decoder": [("dec_src=repeat", "dec_step", 0.8)],
    "modern_attention": [
        ("mo_sec=gqa", "mo_g", 0.98),
        ("mo_sec=window", "mo_sinks", 0.7),
        ("mo_sec=window", "mo_wl", 0.3),
        ("mo_sec=flash", "mo_fstep", 0.8),
    ],
}

# every slider of control `key` on the page: [chart index, shown?, the value of its step]
POSITIONS = """(key) => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(
    (el, i) => (el.layout.sliders || []).filter(s => s.name === key).map(
        s => [i, s.visible !== false, s.steps[s.active].value]))"""


# the value each element that follows control `key` (ui.follow) shows
FOLLOWERS = """(key) => Array.from(document.querySelectorAll(
    `.visattn-follow[data-control="${key}"]`)).map(box => box.dataset.shown)"""


CHARTS = "() => document.querySelectorAll('.js-plotly-plot').length"  # Plotly charts drawn


def positions(page, key: str) -> list:
    return settled_value(page, f"() => JSON.stringify(({POSITIONS})({json.dumps(key)}))")


def followers(page, key: str) -> list:
    return page.evaluate(f"({FOLLOWERS})({json.dumps(key)})")


def drag(page, chart: int, key: str, fraction: float) -> None:
    """Drag the grip of control ``key``'s slider in chart ``chart`` to ``fraction`` of its rail."""
    plot = page.locator(".js-plotly-plot").nth(chart)
    plot.scroll_into_view_if_needed()
    index = page.evaluate(
        "([i, key]) => document.querySelectorAll('.js-plotly-plot')[i].layout.sliders"
        ".filter(s => s.visible !== false).findIndex(s => s.name === key)",
        [chart, key],
    )
    grip = plot.locator(".slider-container .slider-grip-rect").nth(index)
    rail = plot.locator(".slider-container .slider-rail-touch-rect").nth(index)
    g, r = grip.bounding_box(), rail.bounding_box()
    y = g["y"] + g["height"] / 2
    page.mouse.move(g["x"] + g["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(r["x"] + fraction * r["width"], y, steps=12)
    page.mouse.up()


def url_value(page, key: str):
    return page.evaluate(f"() => new URL(location.href).searchParams.get({json.dumps(key)})")


@pytest.mark.parametrize("path", sorted(CASES))
def test_a_figures_slider_moves_its_control_in_the_browser_and_the_link_keeps_it(path):
    require_browser()
    with streamlit_server() as url, chromium() as page:
        sent = frames_sent(page)
        for query, key, fraction in CASES[path]:
            page.goto(f"{url}/{path}?lang=en&{query}")
            wait_rendered(page, True)
            before = json.loads(positions(page, key))
            (chart,) = [i for i, shown, _ in before if shown]  # one slider shows the control
            frames = len(sent)
            drag(page, chart, key, fraction)
            page.wait_for_function(
                f"() => ({POSITIONS})({json.dumps(key)}).some(p => p[1] && p[2] !== "
                f"{json.dumps(next(v for _, shown, v in before if shown))})",
                timeout=10_000,
            )
            after = json.loads(positions(page, key))
            assert sent[frames:] == [], f"{key}: frames sent while dragging"
            moved = {value for _, _, value in after}
            assert len(moved) == 1, f"{key}: the figures that follow it disagree: {after}"
            (value,) = moved
            assert url_value(page, key) == value, f"{key}: the address does not hold it"
            assert set(followers(page, key)) <= {value}, f"{key}: a table or a note lags behind"
            link = page.evaluate("location.href")
            # another browser session (its own context: nothing of this one's shared)
            context = page.context.browser.new_context(viewport=page.viewport_size)
            fresh = context.new_page()
            fresh.goto(link)
            wait_rendered(fresh, True)
            # every chart drawn (a slider's position is read with its chart's place on the page)
            charts = page.evaluate(CHARTS)
            fresh.wait_for_function(f"() => ({CHARTS})() >= {charts}", timeout=60_000)
            assert json.loads(positions(fresh, key)) == after, f"{key}: the link lost it"
            assert followers(fresh, key) == followers(page, key)
            context.close()


def test_the_figures_keep_the_readers_position_when_the_server_answers():
    """The server never hears of a figure's slider: after another control's change it draws the
    figures from what it knows, and the browser puts them back where the reader left them."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/modern_attention?lang=en")
        wait_rendered(page, True)
        drag(page, 0, "mo_g", 0.98)  # the grouping figure: G = 8
        page.wait_for_function("() => location.search.includes('mo_g=8')", timeout=10_000)
        # T, a widget of the same section: the server redraws both figures at its own G = 2
        page.locator(
            '[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]'
        ).first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => location.search.includes('mo_gt=7')", timeout=60_000)
        assert json.loads(positions(page, "mo_g")) == [[0, True, "8"], [1, False, "8"]]
        assert url_value(page, "mo_g") == "8"
        title = page.evaluate("document.querySelectorAll('.js-plotly-plot')[1].layout.title.text")
        assert title.startswith("Attention weights of every query head: G = 8")


def test_a_tour_step_and_the_handout_keep_the_figures_positions():
    """ "Add this view" and the handout's link read the address in the browser (ui.address): the
    step holds σ where the reader dragged the fitted curve's slider."""
    from urllib.parse import parse_qs, urlparse

    from visattn import tour

    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        (chart,) = [i for i, shown, _ in json.loads(positions(page, "kr_sigma")) if shown]
        drag(page, chart, "kr_sigma", 0.8)
        sigma = settled_url_value(page, "kr_sigma")
        page.locator('[data-testid="stSidebar"] summary', has_text="Lecture").click()
        handout = page.locator(".st-key-lec_handout a")
        handout.hover()
        assert parse_qs(urlparse(handout.get_attribute("href")).query)["kr_sigma"] == [sigma]
        page.locator(".st-key-lec_add button").click()
        page.wait_for_function("() => location.search.includes('tour=')", timeout=60_000)
        (step,) = tour.from_link(url_value(page, "tour")).steps
        assert step.page == "kernel_regression" and step.params()["kr_sigma"] == sigma


def test_a_csv_holds_what_the_figure_shows_at_its_sliders_position():
    """The single head's weights CSV is made in the browser from the chart (ui.follow.chart_csv):
    after τ moved in the figure it holds softmax(scores / τ) at that τ, computed here."""
    import csv
    import io

    import numpy as np

    from visattn.lessons import single_head

    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/single_head?lang=en")
        wait_rendered(page, True)
        (chart,) = [i for i, shown, _ in json.loads(positions(page, "sh_temp")) if shown]
        drag(page, chart, "sh_temp", 0.08)
        tau = float(settled_url_value(page, "sh_temp"))
        with page.expect_download() as download:
            page.locator(".st-key-csv_worked_weights button").click()
        rows = list(csv.reader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
        assert rows[0] == ["", "Thinking", "Machines"] and [r[0] for r in rows[1:]] == rows[0][1:]
        got = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
        scores = single_head.worked().scores  # the article's scaled scores
        want = np.exp(scores / tau - (scores / tau).max(axis=1, keepdims=True))
        np.testing.assert_allclose(got, want / want.sum(axis=1, keepdims=True), rtol=1e-5)
        assert tau != 1.0  # the figure's τ, not the page's default


def test_a_long_drag_writes_the_address_seldom_and_its_last_position():
    """Browsers ignore (Chrome) or refuse (Safari) history changes past 100–200 in 10 s: a drag
    back and forth over σ's slider writes the address at most every 400 ms (ui/live.js), and the
    address ends at the position the figure shows."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        (chart,) = [i for i, shown, _ in json.loads(positions(page, "kr_sigma")) if shown]
        page.evaluate(
            """() => { const replace = window.visattnHistory.replace; window.__writes = [];
                window.visattnHistory.replace = (...args) => {
                    window.__writes.push(performance.now()); replace(...args); }; }"""
        )
        for fraction in (0.9, 0.1, 0.7, 0.3, 0.6):
            drag(page, chart, "kr_sigma", fraction)
        (shown,) = [
            value for _, visible, value in json.loads(positions(page, "kr_sigma")) if visible
        ]
        assert settled_url_value(page, "kr_sigma") == shown
        writes = page.evaluate("() => window.__writes")
        assert writes, "the address was never written"
        gaps = [b - a for a, b in zip(writes, writes[1:], strict=False)]
        assert all(gap >= 390 for gap in gaps), gaps  # a timer's 400 ms, to its resolution
