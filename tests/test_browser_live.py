"""Live figures in a real browser: dragging the slider inside the kernel page's weight bars redraws the bars and the
printed estimate, and the page sends nothing to the server while it does (issue 14, acceptance)."""

import json

import pytest
from browser_util import chromium, require_browser, streamlit_server, wait_rendered

pytestmark = pytest.mark.browser

# The weight bars: the chart whose first trace is a bar chart and which has an in-figure slider.
FIND = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).findIndex(
    el => el.data && el.data[0] && el.data[0].type === 'bar' && (el.layout.sliders || []).length > 0)"""
STATE = """(i) => { const el = document.querySelectorAll('.js-plotly-plot')[i];
    return JSON.stringify({y: Array.from(el._fullData[0].y), title: el.layout.title.text,
                           bars: Array.from(el.querySelectorAll('.bars .point path')).map(p => p.getAttribute('d')),
                           note: el.layout.annotations[0].text, active: el.layout.sliders[0].active,
                           shown: Array.from(el.querySelectorAll('.annotation-text')).map(a => a.textContent)}); }"""


def test_dragging_the_in_figure_slider_redraws_without_the_server():
    require_browser()
    with streamlit_server() as url, chromium() as page:
        sent: list[str] = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload)[:80])))
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
        assert "112.5" in before["note"] and "112.5" in " ".join(before["shown"])   # the default query 62 of the waists
        g, r = grip.bounding_box(), rail.bounding_box()
        y = g["y"] + g["height"] / 2
        frames_before_drag = len(sent)
        assert frames_before_drag > 0                                       # the recorder works: the page asked for its run
        page.mouse.move(g["x"] + g["width"] / 2, y)
        page.mouse.down()
        target = r["x"] + 0.9 * r["width"]                                  # towards 77: the key 68 takes the weight
        page.mouse.move(target, y, steps=12)
        page.mouse.up()
        # the figure redrew in the browser: wait for it, then compare
        page.wait_for_function(f"(i) => JSON.parse(({STATE})(i)).active !== {before['active']}", arg=i, timeout=10_000)
        after = json.loads(page.evaluate(STATE, i))
        assert after["y"] != before["y"] and after["bars"] != before["bars"]  # the data and the drawn bars
        assert after["title"] != before["title"] and after["note"] != before["note"]
        assert after["shown"] != before["shown"]                            # the estimate printed in the DOM changed
        assert max(after["y"]) == after["y"][0]                             # key 68 (the first row) is now the heaviest
        assert sent[frames_before_drag:] == [], f"frames sent while dragging: {sent[frames_before_drag:]}"
        # the Streamlit control, the source of truth, still holds 62
        assert page.locator('[data-testid="stNumberInput"] input').first.input_value() == "62"
