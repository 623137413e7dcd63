"""Live figures in a real browser: dragging σ's slider inside the kernel page's fitted curve
redraws the weight bars that follow it and the printed estimate, at that σ, and the page sends
nothing to the server while it does."""

import json
import math

import pytest
from browser_util import (
    chromium,
    frames_sent,
    require_browser,
    settled_url_value,
    streamlit_server,
    wait_rendered,
)

pytestmark = pytest.mark.browser

# The weight bars: the chart whose first trace is a bar chart (it follows σ: a hidden slider).
FIND = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).findIndex(
    el => el.data && el.data[0] && el.data[0].type === 'bar'
          && (el.layout.sliders || []).length > 0)"""
# The fitted curve: the chart with σ's slider shown.
CURVE = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).findIndex(
    el => (el.layout.sliders || []).some(s => s.name === 'kr_sigma' && s.visible !== false))"""
STATE = """(i) => {
    const el = document.querySelectorAll('.js-plotly-plot')[i];
    const bars = Array.from(el.querySelectorAll('.bars .point path')).map(p => p.getAttribute('d'));
    const shown = Array.from(el.querySelectorAll('.annotation-text')).map(a => a.textContent);
    return JSON.stringify({y: Array.from(el._fullData[0].y), title: el.layout.title.text, bars,
                           note: el.layout.annotations[0].text,
                           active: el.layout.sliders[0].active, shown});
}"""
ESTIMATE = ".st-key-follow_kernel_estimate .visattn-metric-value"


def test_dragging_sigma_redraws_the_bars_without_the_server():
    require_browser()
    with streamlit_server() as url, chromium() as page:
        sent = frames_sent(page)
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        page.wait_for_function(f"() => ({FIND})() >= 0 && ({CURVE})() >= 0", timeout=60_000)
        i, curve = page.evaluate(FIND), page.evaluate(CURVE)
        before = json.loads(page.evaluate(STATE, i))
        # the default query 62 of the waists, σ = 1
        assert "112.5" in before["note"] and "112.5" in " ".join(before["shown"])
        assert page.locator(ESTIMATE).inner_text() == "112.5"
        plot = page.locator(".js-plotly-plot").nth(curve)
        plot.scroll_into_view_if_needed()
        grip = plot.locator(".slider-container .slider-grip-rect").first
        rail = plot.locator(".slider-container .slider-rail-touch-rect").first
        grip.wait_for(state="visible")
        g, r = grip.bounding_box(), rail.bounding_box()
        y = g["y"] + g["height"] / 2
        frames_before_drag = len(sent)
        assert frames_before_drag > 0  # the recorder works: the page asked for its run
        page.mouse.move(g["x"] + g["width"] / 2, y)
        page.mouse.down()
        page.mouse.move(r["x"] + 0.9 * r["width"], y, steps=12)  # a wide σ: weights even out
        page.mouse.up()
        # the bars redrew in the browser: wait for it, then compare
        page.wait_for_function(
            f"(i) => JSON.parse(({STATE})(i)).active !== {before['active']}", arg=i, timeout=10_000
        )
        sigma = float(settled_url_value(page, "kr_sigma"))
        after = json.loads(page.evaluate(STATE, i))
        assert after["bars"] != before["bars"] and after["note"] != before["note"]
        # by hand: the Gaussian weights of the keys 68, 60, 64 for the query 62 at σ
        e = [math.exp(-((62 - k) ** 2) / (2 * sigma**2)) for k in (68, 60, 64)]
        weights = [x / sum(e) for x in e]
        assert after["y"] == pytest.approx(weights, rel=1e-5, abs=1e-7)
        estimate = sum(w * v for w, v in zip(weights, (126, 110, 115), strict=True))
        assert page.locator(ESTIMATE).inner_text() == f"{estimate:.6g}"
        assert f"f(62) = {estimate:.6g}" in " ".join(after["shown"])  # printed in the figure too
        assert sent[frames_before_drag:] == [], (
            f"frames sent while dragging: {sent[frames_before_drag:]}"
        )
        # the query, a widget of the page, still holds 62
        assert page.locator(".st-key-kr_q_n input").input_value() == "62"


def test_a_section_control_reruns_its_section_with_fresh_values():
    """The data set is chosen inside tab ①'s section: its partial rerun must read the new choice (a
    fragment reruns with the arguments of the last full run), so the game's two key features give
    two query sliders and the plane."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        page.locator(".st-key-kr_preset").click()
        page.get_by_role(
            "option", name="Game: strength and intelligence → ability (article 000)"
        ).click()
        page.wait_for_function(
            "() => location.href.includes('kr_preset=game_both')", timeout=60_000
        )
        page.locator(".st-key-kr_q2_s").wait_for(state="visible", timeout=60_000)
        page.wait_for_function(
            """() => Array.from(document.querySelectorAll('.js-plotly-plot')).some(
            el => el.data && el.data[0] && el.data[0].type === 'heatmap'
                  && (el.layout.sliders || []).length > 0)""",
            timeout=60_000,
        )
        notes = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot'))
            .filter(el => el.layout.sliders).map(el => el.layout.annotations[0].text)""")
        # the game's newcomer, not the waist 62
        assert notes and all("f(207, 289)" in n for n in notes)
        main = page.locator('[data-testid="stMain"]').inner_text()
        # the game's column names, not "key 1"
        assert "Query: strength" in main and "Query: intelligence" in main
        assert "invented for the lesson" in main  # the game's note, not the waist's
        assert page.locator('[data-testid="stException"]').count() == 0
