"""The lecture in a real browser: the speaker view in a second tab follows and drives the projector
tab; a chart exported as standalone HTML opens from disk with the network off and its slider drags;
the single-head handout printed to PDF holds every number of the worked example and no widget; at
1280×720 with present=1 every page and every step of the built-in tour opens on its figure, with
no chart text below 18 px."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import zipfile

import numpy as np
import pytest
from apptest_util import ROOT
from browser_util import (
    chromium,
    require_browser,
    settled_value,
    streamlit_server,
    wait_rendered,
)
from test_single_head import REF

from ui.registry import PAGES
from visattn import lecture

pytestmark = pytest.mark.browser


def count(page) -> str:
    return page.locator(".visattn-sp-count").inner_text()


def test_speaker_view_follows_and_drives_the_projector():
    require_browser()
    with streamlit_server() as url, chromium(1280, 720) as first:
        tabs = first.context.browser.new_context(viewport={"width": 1280, "height": 720})
        projector = tabs.new_page()
        projector.goto(f"{url}/kernel_regression?tour=intro&step=1&present=1&lang=en")
        wait_rendered(projector, True)
        speaker = tabs.new_page()  # a second tab of the same browser (and origin)
        speaker.goto(f"{url}/?speaker=1&tour=intro&step=1&lang=en")
        wait_rendered(speaker, False)
        total = len(lecture.INTRO)
        assert count(speaker) == f"Step 1 / {total}"
        assert "one query looks at every key" in speaker.locator(".visattn-sp-notes").inner_text()
        assert re.fullmatch(r"\d\d:\d\d:\d\d", speaker.locator(".visattn-sp-clock").inner_text())
        # the speaker drives: its Next moves the projector, which says where it is now
        speaker.locator('[data-go="next"]').click()
        projector.wait_for_function("() => location.search.includes('step=2')", timeout=60_000)
        wait_rendered(projector, True)
        speaker.wait_for_function(
            f"() => document.querySelector('.visattn-sp-count').textContent === 'Step 2 / {total}'",
            timeout=60_000,
        )
        assert (
            speaker.locator(".visattn-sp-next").inner_text() == "Next: Q, K and V from the same X"
        )
        # the projector's clicker: the speaker follows
        projector.keyboard.press("PageDown")
        projector.wait_for_function("() => location.search.includes('step=3')", timeout=60_000)
        wait_rendered(projector, True)
        speaker.wait_for_function(
            f"() => document.querySelector('.visattn-sp-count').textContent === 'Step 3 / {total}'",
            timeout=60_000,
        )
        assert "/single_head" in projector.evaluate("location.pathname")
        # the notes never show on the projector
        notes = speaker.locator(".visattn-sp-notes").inner_text()
        assert notes and notes not in projector.locator("body").inner_text()
        projector.keyboard.press("ArrowLeft")
        projector.wait_for_function("() => location.search.includes('step=2')", timeout=60_000)
        speaker.wait_for_function(
            f"() => document.querySelector('.visattn-sp-count').textContent === 'Step 2 / {total}'",
            timeout=60_000,
        )


def test_two_projectors_on_two_tours_never_pull_the_speaker_back_and_forth():
    """A projector tab on the built-in tour, another on a lecturer's own: the speaker view follows
    the tab that last opened a step, stays there (a tab answering "where" is not a move), and moves
    only the projector of its own tour."""
    from visattn.tour import Step, Tour, to_link

    require_browser()
    own = to_link(Tour((Step("positional_encoding"), Step("decoder"))))
    with streamlit_server() as url, chromium(1280, 720) as first:
        tabs = first.context.browser.new_context(viewport={"width": 1280, "height": 720})
        intro = tabs.new_page()
        intro.goto(f"{url}/kernel_regression?tour=intro&step=1&present=1&lang=en")
        wait_rendered(intro, True)
        speaker = tabs.new_page()
        speaker.goto(f"{url}/?speaker=1&tour=intro&step=1&lang=en")
        wait_rendered(speaker, False)
        mine = tabs.new_page()
        mine.goto(f"{url}/positional_encoding?tour={own}&step=1&present=1&lang=en")
        wait_rendered(mine, True)
        # the tab that opened a step last: the speaker follows it, once
        speaker.wait_for_function(
            "() => document.querySelector('.visattn-sp-count')?.textContent === 'Step 1 / 2'",
            timeout=60_000,
        )
        wait_rendered(speaker, False)
        loads = []

        def loaded(frame) -> None:
            if frame == speaker.main_frame:
                loads.append(frame.url)

        speaker.on("framenavigated", loaded)
        speaker.wait_for_timeout(8000)
        assert loads == [], f"the speaker view reloaded: {loads}"
        speaker.locator('[data-go="next"]').click()
        mine.wait_for_function("() => location.search.includes('step=2')", timeout=60_000)
        assert "/decoder" in mine.evaluate("location.pathname")
        speaker.wait_for_function(
            "() => document.querySelector('.visattn-sp-count')?.textContent === 'Step 2 / 2'",
            timeout=60_000,
        )
        assert "step=" not in intro.evaluate("location.search")  # still step 1: not its speaker
        assert "/kernel_regression" in intro.evaluate("location.pathname")


SLIDER_STATE = """() => {
    const gd = document.querySelector('.js-plotly-plot');
    return {active: gd.layout.sliders[0].active, z: JSON.stringify(gd.data[0].z)};
}"""


def test_exported_html_opens_offline_and_its_slider_drags(tmp_path):
    """The single-head page's "export figures" zip, downloaded in the browser; its τ heatmap (an
    in-figure slider) opened from disk with the network off."""
    require_browser()
    with streamlit_server() as url, chromium(1280, 900) as page:
        page.goto(f"{url}/single_head?lang=en")
        wait_rendered(page, True)
        panel = '[data-testid="stSidebar"] [data-testid="stExpander"] summary'
        page.locator(panel).filter(has_text="Lecture").click()
        with page.expect_download(timeout=120_000) as download:
            page.locator(".st-key-lec_zip button").filter(has_text="Export figures").first.click()
        download.value.save_as(tmp_path / "figures.zip")
        data = (tmp_path / "figures.zip").read_bytes()
        archive = zipfile.ZipFile(io.BytesIO(data))
        assert "visattn_worked_weights.html" in archive.namelist()
        archive.extract("visattn_worked_weights.html", tmp_path)
        offline = page.context.browser.new_context(viewport={"width": 1280, "height": 800})
        offline.set_offline(True)
        requests = []
        figure = offline.new_page()
        figure.on("request", lambda r: requests.append(r.url))
        figure.goto((tmp_path / "visattn_worked_weights.html").as_uri())
        figure.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        before = figure.evaluate(SLIDER_STATE)
        rail = figure.locator(".slider-rail-rect").bounding_box()
        grip = figure.locator(".slider-grip-rect").bounding_box()
        figure.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
        figure.mouse.down()
        figure.mouse.move(rail["x"] + rail["width"] * 0.9, rail["y"] + rail["height"] / 2, steps=8)
        figure.mouse.up()
        figure.wait_for_timeout(500)
        after = figure.evaluate(SLIDER_STATE)
        assert after["active"] > before["active"] and after["z"] != before["z"]
        assert all(r.startswith(("file:", "data:", "blob:")) for r in requests), requests
        offline.close()


def shown(v: float) -> str:
    """A number as the worked example writes it (at most four decimals, no trailing zeros)."""
    return f"{v:.4f}".rstrip("0").rstrip(".")


WIDGET_WORDS = ("Download CSV", "Presenter mode", "Copy link", "Predict, then reveal", "Tour")


def printed(page, pdf, layout: bool = True) -> str:
    """The page printed to ``pdf`` (print media), as pdftotext reads it: laid out as on paper, or
    (``layout`` False) in reading order, where a table cell wrapped over two lines stays whole."""
    if not shutil.which("pdftotext"):
        pytest.fail("pdftotext missing: apt-get install -y poppler-utils (as .ci/run does)")
    page.emulate_media(media="print")
    page.pdf(path=str(pdf), print_background=True)
    mode = ["-layout"] if layout else []
    return subprocess.run(
        ["pdftotext", *mode, str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


# every metric's value and every table cell the handout shows, as its text
SHOWN_NUMBERS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stMetricValue"], '
    + '[data-testid="stMain"] [data-testid="stTable"] td'), (el) => el.textContent.trim())
    .filter((text) => text)"""


def test_every_page_s_handout_prints_each_metric_and_each_table_cell(tmp_path):
    """A handout once hid every table (st.dataframe, drawn on a canvas), every metric with a help
    icon and every fold: the decoder's lacked 9.66 GB and its tables. Now each page's handout
    prints every metric value and table cell it shows (pdftotext, whitespace aside)."""
    require_browser()
    missing, counted = {}, {}
    with streamlit_server() as url, chromium(1280, 900) as page:
        for each in PAGES:
            if each.lesson is None:
                continue
            page.goto(f"{url}/{each.url_path}?handout=1&lang=en")
            wait_rendered(page, True)
            page.wait_for_timeout(1500)
            shown = page.evaluate(SHOWN_NUMBERS)
            text = "".join(printed(page, tmp_path / f"{each.id}.pdf", layout=False).split())
            page.emulate_media(media="screen")
            counted[each.id] = len(shown)
            lost = [v for v in shown if "".join(v.split()) not in text]
            if lost:
                missing[each.id] = lost[:10]
    print(counted)
    assert counted["decoder"] and counted["kernel_regression"]  # tables and metrics there
    assert not missing, missing


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_handout_prints_every_number_of_the_worked_example(lang, tmp_path):
    require_browser()
    with streamlit_server() as url, chromium(1280, 900) as page:
        page.goto(f"{url}/single_head?handout=1&lang={lang}")
        wait_rendered(page, True)
        page.wait_for_timeout(1500)
        text = printed(page, tmp_path / "handout.pdf")
    words = set(re.findall(r"\d+(?:\.\d+)?", text))
    for name in ("Q", "K", "V", "raw", "scores", "weights", "Z"):
        for v in np.ravel(REF[name]):
            assert shown(v) in words, (name, shown(v))
    for v in (0.012, 0.988, 4, 16, 2, 8, 1.97):  # article 001's printed numbers, beside them
        assert shown(v) in words, v
    assert ("Printed vs computed" if lang == "en" else "文中数字与计算结果对照") in text
    if lang == "en":
        for word in WIDGET_WORDS:
            assert word not in text, word


def test_a_tabbed_page_s_handout_prints_every_section(tmp_path):
    """On paper there are no tabs (ui.frame.tabs): every section of the modern page is printed, each
    under its tab's name, with its charts drawn."""
    require_browser()
    with streamlit_server() as url, chromium(1280, 900) as page:
        page.goto(f"{url}/modern_attention?handout=1&lang=zh")
        wait_rendered(page, True)
        page.wait_for_timeout(1500)
        assert page.locator('[role="tab"]').count() == 0
        drawn = settled_value(page, "() => document.querySelectorAll('.js-plotly-plot').length")
        text = printed(page, tmp_path / "handout.pdf")
    names = json.loads(
        (ROOT / "ui" / "locales" / "zh" / "modern_attention.json").read_text("utf-8")
    )
    assert all(name in text for name in names["sections"].values()), names["sections"]
    assert drawn == 7  # every section's charts: 2 + 1 + 2 + 2


FIRST_SCREEN = """(figure) => {
    const boxes = Array.from(document.querySelectorAll(
        '[data-testid="stMain"] [class*="st-key-chart_"]'))
        .filter(b => b.getBoundingClientRect().height > 0);
    const box = figure ? boxes.find(b => b.classList.contains('st-key-' + figure)) : boxes[0];
    if (!box) return null;
    const r = box.getBoundingClientRect();
    const sizes = Array.from(box.querySelectorAll('.main-svg text'))
        .filter(t => t.textContent.trim() && t.getBoundingClientRect().height > 0)
        .map(t => parseFloat(getComputedStyle(t).fontSize));
    return {top: r.top, bottom: r.bottom, height: innerHeight, smallest: Math.min(...sizes)};
}"""


def on_first_screen(page, figure: str = "") -> dict:
    """Until the page has scrolled to ``figure`` (or its first chart): where it is."""
    page.wait_for_function(
        f"() => ({FIRST_SCREEN})({figure!r}) !== null "
        f"&& ({FIRST_SCREEN})({figure!r}).top < innerHeight / 3",
        timeout=60_000,
    )
    page.wait_for_timeout(1500)  # the scroll settles (it is redone while the page still grows)
    return page.evaluate(FIRST_SCREEN, figure)


def test_presenter_first_screen_shows_the_main_figure(tmp_path):
    require_browser()
    with streamlit_server() as url, chromium(1280, 720) as page:
        for p in PAGES:
            if p.id == "home":
                continue
            page.goto(f"{url}/{p.url_path}?present=1&lang=en")
            wait_rendered(page, True)
            where = on_first_screen(page)
            page.screenshot(path=str(tmp_path / f"{p.id}.png"))
            assert 0 <= where["top"] < 200, (p.id, where)
            assert where["smallest"] >= 18, (p.id, where)
        for number, step in enumerate(lecture.INTRO.steps, start=1):
            path = next(p.url_path for p in PAGES if p.id == step.page)
            view = f"{step.query}&" if step.query else ""
            page.goto(f"{url}/{path}?{view}tour=intro&step={number}&present=1&lang=zh")
            wait_rendered(page, True)
            where = on_first_screen(page, step.figure)
            assert 0 <= where["top"] < 200, (number, where)
            assert where["smallest"] >= 18, (number, where)
            assert page.locator(".visattn-bar").is_visible()  # Prev/Next stay on screen
        # a bare link to a step opens that step's view, on its figure
        page.goto(f"{url}/?tour=intro&step=5&present=1")
        page.wait_for_function("() => location.pathname.endsWith('/single_head')", timeout=60_000)
        wait_rendered(page, True)
        assert "sh_view=sqrt" in page.evaluate("location.search")
        assert 0 <= on_first_screen(page, lecture.INTRO.step(5).figure)["top"] < 200


def test_slides_zip_holds_every_chart_as_svg_and_png_at_1920_by_1080(tmp_path):
    """The Lecture panel's slides: made in the browser by Plotly, one zip, text at the
    presenter's size (20 px on the 1280×720 layout, saved at 1.5×) though the page is not in
    presenter mode."""
    require_browser()
    with streamlit_server() as url, chromium(1280, 900) as page:
        page.goto(f"{url}/single_head?lang=en")
        wait_rendered(page, True)
        charts = page.locator('[data-testid="stMain"] [class*="st-key-chart_"]').count()
        panel = '[data-testid="stSidebar"] [data-testid="stExpander"] summary'
        page.locator(panel).filter(has_text="Lecture").click()
        page.wait_for_function(  # its script has run (once the panel is open)
            "() => document.querySelector('#visattn-slides button')?.onclick", timeout=30_000
        )
        with page.expect_download(timeout=120_000) as download:
            label = page.locator("#visattn-slides button").inner_text()
            assert label.startswith("Export figures") and ":material/" not in label  # plain HTML
            page.locator("#visattn-slides button").click()
        download.value.save_as(tmp_path / "slides.zip")
    archive = zipfile.ZipFile(tmp_path / "slides.zip")
    assert archive.testzip() is None  # every CRC right
    names = archive.namelist()
    assert len(names) == 2 * charts and "visattn_worked_weights.svg" in names
    for name in names:
        data = archive.read(name)
        if name.endswith(".png"):
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            assert (int.from_bytes(data[16:20]), int.from_bytes(data[20:24])) == (1920, 1080)
        else:
            svg = data.decode("utf-8")
            assert re.search(r'<svg[^>]* width="1920" height="1080"', svg), name
            sizes = [float(s) for s in re.findall(r"font-size: ?([\d.]+)px", svg)]
            assert sizes and min(sizes) >= 18, (name, sorted(set(sizes)))


# --- predict, then reveal, section by section (point 6) -------------------------------------------
BLURRED = """(selector) => Array.from(document.querySelectorAll(selector))
    .filter(e => e.getBoundingClientRect().height > 0)
    .map(e => {
        for (let n = e; n; n = n.parentElement) {
            if (getComputedStyle(n).filter.includes('blur')) return true;
        }
        return false;
    })"""
BANDWIDTH = ".st-key-lec_sec_bandwidth"
VECTORS = ".st-key-lec_sec_vectors"
INPUTS = (  # what the lecturer sets: never blurred
    '[data-testid="stSlider"]',
    '[data-testid="stNumberInput"]',
    '[data-testid="stSelectbox"]',
    '.st-key-kr_data__ed0 [data-testid="stDataFrame"]',  # the key→value table's editor
)


def blurred(page, selector: str) -> list[bool]:
    """Whether each visible element matched is drawn blurred (by itself or a box around it)."""
    return page.evaluate(BLURRED, selector)


def bars_note(page) -> str:
    return page.evaluate(
        "() => document.querySelector('.st-key-chart_kernel_weights_bars .js-plotly-plot')"
        ".layout.annotations.map(a => a.text).join(' | ')"
    )


def test_a_section_reveals_its_numbers_and_not_the_next_sections(tmp_path):
    """The kernel page with hide=1: ①'s estimate, key-by-key table and formula (elements that
    follow σ, ui.follow) are blurred and its chart says "= ?"; the reveal button of σ's section
    shows them, and the vectors section (tab ②) stays hidden. What the lecturer sets (sliders,
    number boxes, the data editor) is never blurred."""
    require_browser()
    with streamlit_server() as url, chromium(1280, 1600) as page:
        page.goto(f"{url}/kernel_regression?hide=1&lang=en")
        wait_rendered(page, True)
        metric = f"{BANDWIDTH} .visattn-metric-value"
        assert blurred(page, metric) == [True]
        key_by_key = f"{BANDWIDTH} .visattn-table td"
        assert blurred(page, key_by_key) and all(blurred(page, key_by_key))
        formula = blurred(page, f"{BANDWIDTH} .katex-display")  # the formula with its numbers
        assert formula and all(formula)
        assert "= ?" in bars_note(page) and "112.5" not in bars_note(page)
        # the pairs' table is folded under the data set: the lecturer opens it to set them
        page.locator('[data-testid="stExpander"] summary', has_text="Key→value pairs").click()
        cells = page.locator('.st-key-kr_data__ed0 [aria-readonly="false"]')
        cells.first.wait_for(state="attached", timeout=60_000)  # its grid drawn
        for selector in INPUTS:
            assert blurred(page, selector) and not any(blurred(page, selector)), selector
        page.screenshot(path=str(tmp_path / "hidden.png"))
        page.locator(".st-key-lec_section_bandwidth button").first.click()
        page.wait_for_function(
            f"() => !({BLURRED})('{metric}')[0]", timeout=60_000
        )  # the section's rerun drew its style
        wait_rendered(page, True)
        assert page.locator(metric).inner_text() == "112.5"
        assert not any(blurred(page, key_by_key))
        assert not any(blurred(page, f"{BANDWIDTH} .katex-display"))
        assert "112.5" in bars_note(page)
        page.screenshot(path=str(tmp_path / "revealed.png"))
        # the next section: still hidden
        page.locator('[data-testid="stTab"]').nth(1).click()
        editors = f'{VECTORS} [data-testid="stDataFrame"]:has([aria-readonly="false"])'
        page.locator(editors).first.wait_for(timeout=60_000)  # tab ② drawn: a run of the page
        wait_rendered(page, True)
        output = f'{VECTORS} [data-testid="stDataFrame"]:not(:has([aria-readonly="false"]))'
        assert blurred(page, output) and all(blurred(page, output))
        assert all(blurred(page, f'{VECTORS} [data-testid="stTable"] td'))
        assert blurred(page, editors) and not any(blurred(page, editors))  # Q, K, V: inputs
        page.screenshot(path=str(tmp_path / "next_section.png"))
        # the symbols inline in a section's prose stay readable (the decoder's "row i", "token t")
        page.goto(f"{url}/decoder?hide=1&lang=en")
        wait_rendered(page, True)
        inline = '[class*="st-key-lec_sec_"] [data-testid="stMarkdownContainer"] p .katex'
        assert blurred(page, inline) and not any(blurred(page, inline))


# --- the camera button's slide (point 4) ----------------------------------------------------------
def camera(page, url: str, query: str, fmt: str, chart: str = "chart_kernel_weights_bars") -> bytes:
    """What a chart's camera button saves (``fmt``: the lecture panel's png or svg)."""
    page.goto(f"{url}/kernel_regression?lang=en&slide={fmt}{query}")
    wait_rendered(page, True)
    plot = page.locator(f".st-key-{chart} .js-plotly-plot")
    plot.scroll_into_view_if_needed()
    plot.hover()
    with page.expect_download(timeout=60_000) as download:
        plot.locator('.modebar-btn[data-title^="Download plot"]').click()
    return open(download.value.path(), "rb").read()


def slide_text_px(svg: str) -> list[float]:
    """Every font size of an SVG slide, in pixels of the slide (its viewBox is the layout)."""
    width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))
    layout = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    return [float(s) * width / layout for s in re.findall(r"font-size: ?([\d.]+)px", svg)]


def title_ink_px(png: bytes) -> int:
    """The height in pixels of the dark title text at the top left of a slide."""
    from PIL import Image  # Pillow comes with Streamlit

    grey = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    rows = np.flatnonzero((grey[:150, :900] < 100).any(axis=1))
    return int(rows.max() - rows.min() + 1)


def test_the_camera_saves_a_1920_by_1080_slide_with_presenter_size_text():
    """Off a projector the chart's text is 13 px; its camera slide must still carry the presenter's
    (20 px at 1280×720 saved at 1.5×: 30 px on the slide)."""
    require_browser()
    sizes, ink = {}, {}
    with streamlit_server() as url, chromium(1280, 900) as page:
        for mode, query in (("normal", ""), ("presenter", "&present=1")):
            png = camera(page, url, query, "png")
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == (1920, 1080)
            ink[mode] = title_ink_px(png)
            svg = camera(page, url, query, "svg").decode("utf-8")
            assert re.search(r'<svg[^>]* width="1920" height="1080"', svg)
            sizes[mode] = slide_text_px(svg)
        # a dense heatmap (21 queries × 3 keys): its cell texts, the smallest text there is
        grid = camera(page, url, "", "svg", "chart_kernel_weights_heatmap").decode("utf-8")
        assert min(slide_text_px(grid)) >= 18
    assert min(sizes["presenter"]) >= 18 and min(sizes["normal"]) >= min(sizes["presenter"])
    assert ink["normal"] >= 0.95 * ink["presenter"], ink
