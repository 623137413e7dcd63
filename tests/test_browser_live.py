"""Live figures in a real browser: dragging the slider inside the kernel page's weight bars redraws
the bars and the printed estimate, and the page sends nothing to the server while it does (issue 14,
acceptance)."""

import json

import pytest
from browser_util import chromium, require_browser, streamlit_server, wait_rendered

pytestmark = pytest.mark.browser

# The weight bars: the chart whose first trace is a bar chart and which has an in-figure slider.
FIND = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).findIndex(
    el => el.data && el.data[0] && el.data[0].type === 'bar'
          && (el.layout.sliders || []).length > 0)"""
STATE = """(i) => {
    const el = document.querySelectorAll('.js-plotly-plot')[i];
    const bars = Array.from(el.querySelectorAll('.bars .point path')).map(p => p.getAttribute('d'));
    const shown = Array.from(el.querySelectorAll('.annotation-text')).map(a => a.textContent);
    return JSON.stringify({y: Array.from(el._fullData[0].y), title: el.layout.title.text, bars,
                           note: el.layout.annotations[0].text,
                           active: el.layout.sliders[0].active, shown});
}"""


def test_dragging_the_in_figure_slider_redraws_without_the_server():
    require_browser()
    with streamlit_server() as url, chromium() as page:
        sent: list[str] = []
        page.on(
            "websocket",
            lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload)[:80])),
        )
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        page.wait_for_function(f"() => ({FIND})() >= 0", timeout=60_000)
        i = page.evaluate(FIND)
        plot = page.locator(".js-plotly-plot").nth(i)
        plot.scroll_into_view_if_needed()
        grip = plot.locator(".slider-container .slider-grip-rect")
        rail = plot.locator(".slider-container .slider-rail-touch-rect")
        grip.wait_for(state="visible")
        before = json.loads(page.evaluate(STATE, i))
        # the default query 62 of the waists
        assert "112.5" in before["note"] and "112.5" in " ".join(before["shown"])
        g, r = grip.bounding_box(), rail.bounding_box()
        y = g["y"] + g["height"] / 2
        frames_before_drag = len(sent)
        assert frames_before_drag > 0  # the recorder works: the page asked for its run
        page.mouse.move(g["x"] + g["width"] / 2, y)
        page.mouse.down()
        target = r["x"] + 0.9 * r["width"]  # towards 77: the key 68 takes the weight
        page.mouse.move(target, y, steps=12)
        page.mouse.up()
        # the figure redrew in the browser: wait for it, then compare
        page.wait_for_function(
            f"(i) => JSON.parse(({STATE})(i)).active !== {before['active']}", arg=i, timeout=10_000
        )
        after = json.loads(page.evaluate(STATE, i))
        # the data and the drawn bars
        assert after["y"] != before["y"] and after["bars"] != before["bars"]
        assert after["title"] != before["title"] and after["note"] != before["note"]
        assert after["shown"] != before["shown"]  # the estimate printed in the DOM changed
        assert max(after["y"]) == after["y"][0]  # key 68 (the first row) is now the heaviest
        assert sent[frames_before_drag:] == [], (
            f"frames sent while dragging: {sent[frames_before_drag:]}"
        )
        # the Streamlit control, the source of truth, still holds 62
        assert page.locator('[data-testid="stNumberInput"] input').first.input_value() == "62"


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
