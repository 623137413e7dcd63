"""The decoder page's KV-cache animation in a real browser: its slider and its play button are the
control dec_step. Playing walks the frames in the browser alone — no frame goes to the server — and
each frame shown moves the control: the address bar holds it and the three numbers under the
figure follow it. The address opened in another browser shows that frame and those numbers. At
1280×720 the page opens with its first figure on the screen."""

import json

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

T = 20  # the default sequence: 10 random words, repeated
# the animation's step, the address bar's dec_step, and the numbers under the figure
STATE = """() => {
    const anim = Array.from(document.querySelectorAll('.js-plotly-plot')).find(
        el => (el.layout.sliders || []).some(s => s.name === 'dec_step'));
    const slider = anim.layout.sliders.find(s => s.name === 'dec_step');
    const metrics = Array.from(document.querySelectorAll('.visattn-metric-value'),
                               m => m.textContent);
    return JSON.stringify({step: slider.steps[slider.active].value,
                           url: new URL(location.href).searchParams.get('dec_step'), metrics});
}"""


def numbers(step: int, tokens: list[str]) -> list[str]:
    """What the three numbers read at ``step``: keys read, rows in the cache, the new token."""
    return [str(step), f"{step} / {T}", f"“{tokens[step - 1]}”"]


def address(step: int) -> str | None:
    """What the address holds for ``step``: nothing for the default 5."""
    return None if step == 5 else str(step)


def test_playing_the_cache_moves_the_step_in_the_address_and_the_numbers_follow():
    from visattn.models import induction

    require_browser()
    tokens = induction.repeated_sequence(10, 0)
    with streamlit_server() as url, chromium() as page:
        sent = frames_sent(page)
        page.goto(f"{url}/decoder?lang=en")
        wait_rendered(page, True)
        chart = page.locator(".st-key-chart_decoder_kv_cache")
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        opened = json.loads(page.evaluate(STATE))
        assert opened["step"] == "5" and opened["url"] is None  # the default, left out
        assert opened["metrics"] == numbers(5, tokens)
        frames = len(sent)
        chart.locator(".updatemenu-button").first.click()  # ▶ play
        seen = []
        for _ in range(40):  # 600 ms a frame
            page.wait_for_timeout(300)
            seen.append(json.loads(page.evaluate(STATE)))
            if seen[-1]["step"] == str(T):
                break
        assert sent[frames:] == [], f"frames sent while playing: {sent[frames:]}"
        assert len({s["step"] for s in seen}) > 5  # it played
        before = opened
        for state in seen:
            step = int(state["step"])
            assert state["metrics"] == numbers(step, tokens), state
            # the address is written at most every 400 ms (ui/live.js), so it may still hold
            # the frame before this one, or what the last reading saw (play starts at frame 1,
            # so the first reading may still see the opened frame 5)
            assert state["url"] in {address(step), address(step - 1), before["url"]}, state
            before = state
        assert seen[-1]["step"] == str(T)
        assert settled_url_value(page, "dec_step") == str(T)
        link = page.evaluate("location.href")
        context = page.context.browser.new_context(viewport=page.viewport_size)
        fresh = context.new_page()
        fresh.goto(link)
        wait_rendered(fresh, True)
        fresh.locator(".st-key-chart_decoder_kv_cache").scroll_into_view_if_needed()
        fresh.wait_for_timeout(1000)
        there = json.loads(fresh.evaluate(STATE))
        assert there["step"] == str(T) and there["metrics"] == numbers(T, tokens)
        context.close()
