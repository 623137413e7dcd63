"""The training page's checkpoints in a real browser: dragging the slider inside the heads' maps
replays the checkpoints — every head's map redrawn — and the page sends nothing to the server while
it does; the slider is the control dec_tcheck, which the address bar holds, and the address opened
in another browser shows the maps at that checkpoint. A decoder page's link with training values
(made when the training was that page's) opens the training page with them. At 1280×720 the page
opens with its first figure on the screen."""

import json

import numpy as np
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

# One layer, 100 steps: a few seconds of training; a seed no other test trains.
QUICK = "dec_tlayers=1&dec_tsteps=100&dec_tseed=11"
# The checkpoint maps: heatmaps with an in-figure slider, one trace per head.
FIND = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).findIndex(
    el => el.data && el.data.length > 1 && el.data.every(d => d.type === 'heatmap')
          && (el.layout.sliders || []).length > 0)"""
STATE = """(i) => {
    const el = document.querySelectorAll('.js-plotly-plot')[i];
    const z = el._fullData.map(d => Array.from(d.z, row => Array.from(row)));
    const drawn = Array.from(el.querySelectorAll('.hm image')).map(im => im.getAttribute('href'));
    return JSON.stringify({z, drawn, active: el.layout.sliders[0].active,
                           labels: el.layout.sliders[0].steps.map(s => s.label)});
}"""


def test_dragging_the_checkpoint_slider_replays_the_heads_without_the_server():
    require_browser()
    with streamlit_server() as url, chromium() as page:
        sent = frames_sent(page)
        page.goto(f"{url}/decoder?lang=en&{QUICK}")  # an old link: the training was the decoder's
        page.wait_for_function("() => location.pathname.endsWith('/training')", timeout=60_000)
        wait_rendered(page, True)
        search = page.evaluate("new URLSearchParams(location.search).toString()")
        assert all(part in search for part in QUICK.split("&")), search
        train = page.locator(".st-key-dec_train_main button")
        train.scroll_into_view_if_needed()
        train.click()
        page.wait_for_function(f"() => ({FIND})() >= 0", timeout=300_000)
        i = page.evaluate(FIND)
        plot = page.locator(".js-plotly-plot").nth(i)
        plot.scroll_into_view_if_needed()
        grip = plot.locator(".slider-container .slider-grip-rect")
        rail = plot.locator(".slider-container .slider-rail-touch-rect")
        grip.wait_for(state="visible")
        page.wait_for_timeout(2000)  # the page settles after the training's last rerun
        before = json.loads(page.evaluate(STATE, i))
        assert before["labels"][0] == "0" and before["labels"][-1] == "100"
        assert before["active"] == len(before["labels"]) - 1  # opens on the last checkpoint
        assert len(before["z"]) == 4  # 1 layer × 4 heads
        g, r = grip.bounding_box(), rail.bounding_box()
        y = g["y"] + g["height"] / 2
        frames_before_drag = len(sent)
        assert frames_before_drag > 0  # the recorder works: the page asked for its runs
        page.mouse.move(g["x"] + g["width"] / 2, y)
        page.mouse.down()
        page.mouse.move(r["x"] + 2, y, steps=12)  # back to step 0: the untrained heads
        page.mouse.up()
        page.wait_for_function(
            f"(i) => JSON.parse(({STATE})(i)).active === 0", arg=i, timeout=10_000
        )
        after = json.loads(page.evaluate(STATE, i))
        # every head's map changed, in the data and in the drawn image
        assert all(a != b for a, b in zip(after["z"], before["z"], strict=True))
        assert after["drawn"] != before["drawn"]
        assert sent[frames_before_drag:] == [], (
            f"frames sent while dragging: {sent[frames_before_drag:]}"
        )
        assert page.locator('[data-testid="stException"]').count() == 0
        assert settled_url_value(page, "dec_tcheck") == "0"
        link = page.evaluate("location.href")
        context = page.context.browser.new_context(viewport=page.viewport_size)
        fresh = context.new_page()
        fresh.goto(link)  # the room keeps the run: the maps are drawn at once
        wait_rendered(fresh, True)
        fresh.wait_for_function(f"() => ({FIND})() >= 0", timeout=60_000)
        there = json.loads(fresh.evaluate(STATE, fresh.evaluate(FIND)))
        assert there["active"] == 0  # the untrained heads again, drawn by the server this time
        assert np.allclose(
            np.array(there["z"], dtype=float), np.array(after["z"], dtype=float), equal_nan=True
        )
        context.close()
