"""The real thing: every page opened by its URL as the first request to a freshly started server."""

import csv
import json
from urllib.parse import urlparse

import pytest
from apptest_util import ROOT
from browser_util import chromium, require_browser, settled_value, streamlit_server, wait_rendered

from ui.registry import PAGES as REGISTRY

pytestmark = pytest.mark.browser

# (URL path, page id, expects a Plotly chart): every page of the app draws one, but home
PAGES = [(p.url_path, p.id, p.id != "home") for p in REGISTRY]


def title_of(pid: str, lang: str) -> str:
    nav = json.loads((ROOT / "ui" / "locales" / lang / f"{pid}.json").read_text(encoding="utf-8"))[
        "nav"
    ]
    return f"{nav} · visattn"


@pytest.mark.parametrize("path,pid,chart", PAGES, ids=[p[1] for p in PAGES])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_deep_link_on_fresh_server(path, pid, chart, lang, tmp_path):
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/{path}?lang={lang}")
        wait_rendered(page, chart)
        page.screenshot(path=str(tmp_path / f"{pid}_{lang}.png"), full_page=True)
        assert page.title() == title_of(pid, lang)
        assert page.locator('[data-testid="stException"]').count() == 0
        if chart:
            assert page.locator(".js-plotly-plot").count() >= 1


FIGURE_DATA = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(
    el => (el.data || []).map(tr => JSON.stringify([tr.type, tr.z ?? null, tr.y ?? null])))"""


def test_link_reproduces_the_view():
    """A view changed by clicking, reopened from its link in a new browser session, draws the same
    figures."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/multi_head?lang=en")
        wait_rendered(page, True)
        page.get_by_text("Layer 1", exact=True).click()  # a non-default setting, made by the user
        page.wait_for_function("() => location.search.includes('mh_layer=1')", timeout=60_000)
        wait_rendered(page, True)
        # the link box reads the address bar in the browser (it stays right after a section's
        # partial rerun)
        page.wait_for_function(
            "() => (document.getElementById('visattn-link') || "
            "{}).textContent?.includes('mh_layer=1')"
        )
        link = page.locator('[data-testid="stSidebar"] #visattn-link').inner_text().strip()
        assert "mh_layer=1" in link and link.startswith(url)
        made = settled_value(page, FIGURE_DATA)
        other = page.context.browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        other.goto(link)
        wait_rendered(other, True)
        assert settled_value(other, FIGURE_DATA) == made
        assert other.locator('[data-testid="stException"]').count() == 0


MARK_CHARTS = """() => document.querySelectorAll('.js-plotly-plot').forEach(
    (el, i) => { el.__probe = i; })"""
CHARTS_NOW = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(
    el => [el.__probe ?? null, JSON.stringify((el.data || []).map(tr => tr.z ?? tr.y ?? null))])"""


def test_a_control_redraws_its_charts_in_place():
    """The query changes two of the kernel page's three figures of ① (the heatmap is of a grid of
    queries): each is redrawn in the element it was drawn in (ui/chart.js, Plotly.react), none is
    built anew; and the change fetches nothing (the tab's icon, a media file, was fetched again at
    every rerun, and so was ①'s CSV while it was made at every run)."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        page.evaluate(MARK_CHARTS)
        before = page.evaluate(CHARTS_NOW)
        requests = []

        def record(request) -> None:
            requests.append(request.url)

        page.on("request", record)
        query = page.locator(".st-key-kr_q_n input")
        query.fill("66")
        query.press("Enter")
        page.wait_for_function(
            """(before) => { const now = Array.from(document.querySelectorAll('.js-plotly-plot'))
                .map(el => JSON.stringify((el.data || []).map(tr => tr.z ?? tr.y ?? null)));
              return now.filter((d, i) => d !== before[i][1]).length >= 2; }""",
            arg=before,
            timeout=60_000,
        )
        after = settled_value(page, CHARTS_NOW)
        assert [probe for probe, _ in after] == list(range(len(before)))  # the same elements
        changed = [
            i for i, ((_, a), (_, b)) in enumerate(zip(before, after, strict=True)) if a != b
        ]
        assert changed == [0, 1], changed  # weights, fitted curve; the heatmap, ②, ③ untouched
        assert requests == []


def test_a_csv_is_written_when_its_button_is_clicked():
    """The sliding-window mask's CSV, a deferred download (made when clicked): the banded causal
    mask of 20 tokens and a window of 4, position by position."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/modern_attention?mo_sec=window&lang=en")
        wait_rendered(page, True)
        with page.expect_download(timeout=60_000) as download:
            page.locator(".st-key-csv_sliding_window_mask button").click()
        assert download.value.suggested_filename == "visattn_sliding_window_mask.csv"
        with open(download.value.path(), encoding="utf-8") as f:
            rows = list(csv.reader(f))
        assert rows[0] == ["", *map(str, range(1, 21))]
        assert [row[0] for row in rows[1:]] == list(map(str, range(1, 21)))
        for i, row in enumerate(rows[1:], start=1):
            assert row[1:] == ["1" if i - 4 < j <= i else "0" for j in range(1, 21)], i


FORMULA = ".st-key-follow_kernel_1d .visattn-follow-tex"
FORMULA_NOW = f"""() => {{ const box = document.querySelector('{FORMULA}');
    const shown = box && box.querySelector('.katex-display');
    if (!shown) return null;
    return [shown.__probe ?? null, box.querySelector('.katex-html').textContent]; }}"""


def test_a_formula_is_typeset_only_when_it_changes():
    """The kernel page's formula with its numbers (it follows σ: ui/follow.js): typeset by KaTeX,
    with its MathML; a rerun of its section that leaves its numbers alone (opening "How σ is
    fitted") leaves the typeset formula as it was, and the query 66 typesets the new numbers into
    the same element."""
    import math

    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        page.locator(f"{FORMULA} .katex-display").wait_for(timeout=60_000)
        assert page.locator(f"{FORMULA} math").count() == 1  # read out by a screen reader
        page.evaluate(
            f"() => {{ document.querySelector('{FORMULA} .katex-display').__probe = 1; }}"
        )
        probe, text = page.evaluate(FORMULA_NOW)
        assert probe == 1 and "112.5" in text
        page.get_by_text("How σ is fitted", exact=False).click()  # reruns the section
        page.locator(".st-key-chart_kernel_loo_error .js-plotly-plot").wait_for(timeout=60_000)
        assert settled_value(page, FORMULA_NOW) == [1, text]  # the very same nodes
        query = page.locator(".st-key-kr_q_n input")
        query.fill("66")
        query.press("Enter")
        page.wait_for_function(f"(old) => ({FORMULA_NOW})()?.[1] !== old", arg=text)
        probe, now = settled_value(page, FORMULA_NOW)
        # f(66) at σ = 1 over the waists 68, 60, 64 → weights 126, 110, 115
        e = [math.exp(-((66 - k) ** 2) / 2) for k in (68, 60, 64)]
        estimate = sum(a * v for a, v in zip(e, (126, 110, 115), strict=True)) / sum(e)
        assert probe is None and f"{estimate:.6g}" in now
        assert page.locator(FORMULA).count() == 1


SHOWN_CHARTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(el => el.getBoundingClientRect().width > 100).length"""


# Marks the charts that show now; MARKED counts the marked charts still in the page
MARK_SHOWN = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(el => el.getBoundingClientRect().width > 100)
    .forEach(el => { el.__visattnMark = 1; })"""
MARKED = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(el => el.__visattnMark).length"""


def test_opening_a_tab_shows_its_panel_and_the_url_holds_it():
    """The modern page's sections are tabs, every one drawn in its panel (ui.frame.tabs). A chart in
    a hidden panel is drawn the first time its tab opens (ui/chart.js); opening a tab shown before
    shows the charts it drew then, not new ones. The URL holds the open tab, and a section's rerun
    afterwards keeps it."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/modern_attention?lang=en&mo_sec=window")
        wait_rendered(page, True)
        assert page.locator('[role="tab"][aria-selected="true"]').inner_text() == "Sliding windows"
        assert page.evaluate(SHOWN_CHARTS) == 2  # the mask and the reach
        assert page.locator(".js-plotly-plot").count() == 2  # the hidden tabs' not drawn yet
        page.evaluate(MARK_SHOWN)
        for name, sec, control in (
            ("FlashAttention", "flash", "mo_ft"),
            ("Sliding windows", "window", "mo_wt"),
            ("FlashAttention", "flash", "mo_ft"),
        ):
            page.get_by_role("tab", name=name).click()
            page.wait_for_function(
                f"() => new URLSearchParams(location.search).get('mo_sec') === '{sec}'",
                timeout=60_000,
            )
            page.locator(f".st-key-{control}").wait_for(timeout=60_000)  # shown now
            wait_rendered(page, True)
            assert page.evaluate(SHOWN_CHARTS) == 2, name
            assert page.locator(".js-plotly-plot").count() == 4, name  # the window's and flash's
            assert page.evaluate(MARKED) == 2, name  # the window's charts, the same ones
        slider = page.locator('.st-key-mo_ft input[type="range"]')
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => location.search.includes('mo_ft=11')", timeout=60_000)
        assert "mo_sec=flash" in page.evaluate("location.search")
        page.get_by_role("tab", name="Grouped-query attention").click()  # the default: no mo_sec
        page.wait_for_function("() => !location.search.includes('mo_sec')", timeout=60_000)
        page.locator(".st-key-mo_gt").wait_for(timeout=60_000)


def test_a_chart_goes_full_screen_and_back():
    """The full-screen button (ui/chart.js; its title translated) gives the figure the screen, and
    Esc gives it back its size in the column. Plotly's own buttons speak Chinese too."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.goto(f"{url}/kernel_regression?lang=zh")
        wait_rendered(page, True)
        chart = page.locator(".st-key-chart_kernel_weights_bars .js-plotly-plot")
        chart.scroll_into_view_if_needed()
        size = "(el) => [el._fullLayout.width, el._fullLayout.height]"
        before = chart.evaluate(size)
        chart.hover()
        buttons = chart.locator(".modebar-btn").evaluate_all(
            "(bs) => bs.map((b) => b.getAttribute('data-title'))"
        )
        assert {"下载图表（PNG）", "平移", "放大", "缩小", "重置坐标轴"} <= set(buttons), buttons
        page.locator(
            ".st-key-chart_kernel_weights_bars .modebar-btn[data-title='全屏（按 Esc 退出）']"
        ).click()
        page.wait_for_function("() => document.fullscreenElement !== null", timeout=10_000)
        screen = page.evaluate("() => [window.innerWidth, window.innerHeight]")
        page.wait_for_function(
            "(s) => { const gd = document.fullscreenElement;"
            " return gd._fullLayout.width === s[0] && gd._fullLayout.height === s[1]; }",
            arg=screen,
            timeout=10_000,
        )
        page.keyboard.press("Escape")
        page.evaluate("() => document.fullscreenElement && document.exitFullscreen()")
        page.wait_for_function("() => document.fullscreenElement === null", timeout=10_000)
        page.wait_for_timeout(500)
        assert chart.evaluate(size) == before


# Installed before the page: the calls of Plotly's resize (a chart drawn again at its column's
# width), once Streamlit's Plotly chunk has set window.Plotly.
COUNT_RESIZES = """(() => {
    window.__resizes = 0;
    const hook = () => {
        const Plots = window.Plotly && window.Plotly.Plots;
        if (Plots && !Plots.__counted) {
            const resize = Plots.resize;
            Plots.resize = function (...args) {
                window.__resizes += 1;
                return resize.apply(this, args);
            };
            Plots.__counted = true;
        }
    };
    new MutationObserver(hook).observe(document, {subtree: true, childList: true});
})();"""
WIDTH = "(gd) => [gd._fullLayout.width, gd.clientWidth]"


def test_a_chart_is_not_resized_as_it_appears_and_follows_its_column():
    """The kernel page's charts appear without a call of Plotly's resize (the chart element's resize
    watcher reports the size it starts with, and answering that drew every chart a second time, 100
    ms after the first); closing the sidebar widens the column, and each chart is drawn again at
    the new width."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        page.add_init_script(COUNT_RESIZES)
        page.goto(f"{url}/kernel_regression?lang=en")
        wait_rendered(page, True)
        settled_value(page, "() => document.querySelectorAll('.js-plotly-plot .main-svg').length")
        page.wait_for_timeout(500)  # past the 100 ms a resize waits before it draws
        assert page.evaluate("() => window.__resizes") == 0
        chart = page.locator(".st-key-chart_kernel_weights_bars .visattn-chart")
        before, _ = chart.evaluate(WIDTH)
        page.locator('[data-testid="stSidebar"]').hover()  # its close button shows on hover
        page.locator('[data-testid="stSidebarCollapseButton"] button').click()
        page.wait_for_function(
            "(w) => document.querySelector("
            "'.st-key-chart_kernel_weights_bars .visattn-chart')._fullLayout.width > w + 100",
            arg=before,
            timeout=10_000,
        )
        assert page.evaluate("() => window.__resizes") >= 1
        drawn, column = chart.evaluate(WIDTH)
        assert abs(drawn - column) <= 1, (drawn, column)


LAYOUT = """() => {
    const box = el => {
        const r = el.getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom];
    };
    const visible = el => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0;
    };
    const plots = Array.from(document.querySelectorAll('.js-plotly-plot')).filter(visible);
    // per figure: its title, axis titles, annotations (cell titles of a grid) and legend, as boxes
    // with their text
    const words = plots.map(p => Array.from(p.querySelectorAll(
        '.gtitle, .g-xtitle text, .g-ytitle text, .annotation-text-g text, .legend .bg, '
        + '.cbtitle text'))
        .filter(visible).map(el => [box(el), (el.textContent || 'legend').slice(0, 40)]));
    const tables = '[data-testid="stDataFrame"] .dvn-scroller, [data-testid="stTable"]';
    const cut = Array.from(document.querySelectorAll(tables))
        .filter(visible).filter(el => el.scrollWidth > el.clientWidth + 2).length;
    // font sizes of the main area's paragraphs by their text (compared paragraph by paragraph) and
    // of its title
    const main = '[data-testid="stMain"] ';
    const paragraphs = main + '[data-testid="stMarkdownContainer"] p';
    const body = Object.fromEntries(Array.from(document.querySelectorAll(paragraphs))
        .filter(visible)
        .map(el => [el.textContent.slice(0, 80), parseFloat(getComputedStyle(el).fontSize)]));
    const h1 = document.querySelector(main + 'h1');
    const title = h1 ? parseFloat(getComputedStyle(h1).fontSize) : 0;
    return {figures: plots.length, words, cut, body, title};
}"""


def overlaps(words, slack=1.0):
    """Pairs of text boxes inside one figure that cover each other (more than ``slack`` px each
    way)."""
    out = []
    for i, (a, ta) in enumerate(words):
        for b, tb in words[i + 1 :]:
            if (
                min(a[2], b[2]) - max(a[0], b[0]) > slack
                and min(a[3], b[3]) - max(a[1], b[1]) > slack
            ):
                out.append((ta, tb))
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenter_mode_on_a_projector(lang, tmp_path):
    """1280×720 with ?present=1, every page: larger text and title than normal, the same figures, no
    two titles of a figure drawn over each other, no table cut off at the side (a horizontal
    scrollbar), no exception."""
    require_browser()
    with streamlit_server() as url, chromium(1280, 720) as page:
        for path, pid, _ in PAGES:
            seen = {}
            for present in ("0", "1"):
                page.goto(f"{url}/{path}?lang={lang}&present={present}")
                wait_rendered(page, pid != "home")
                page.screenshot(path=str(tmp_path / f"{pid}_{lang}_{present}.png"), full_page=True)
                seen[present] = page.evaluate(LAYOUT)
                assert page.locator('[data-testid="stException"]').count() == 0, (pid, present)
            normal, big = seen["0"], seen["1"]
            assert big["figures"] == normal["figures"], (pid, normal["figures"], big["figures"])
            same = normal["body"].keys() & big["body"].keys()  # paragraphs shown in both modes
            assert same and all(big["body"][k] > normal["body"][k] * 1.15 for k in same), (
                pid,
                normal["body"],
                big["body"],
            )
            assert big["title"] > normal["title"] > 0, (pid, normal["title"], big["title"])
            for figure in big["words"]:
                assert not overlaps(figure), (pid, overlaps(figure))
            assert big["cut"] == 0, (pid, "a table is cut off at the side")


INJECTIONS = [
    "/?![t](http://127.0.0.1:9/p.png)=1&[Click here](http://127.0.0.1:9/x)=1",
    "/positional_encoding?pe_dims=![t](http://127.0.0.1:9/p.png)",
    "/single_head?sh_view=sentence&sh_text=![t](http://127.0.0.1:9/p.png) "
    "[Click](http://127.0.0.1:9/x)",
]


@pytest.mark.parametrize("link", INJECTIONS)
def test_links_cannot_inject_markdown(link):
    """Text from a link (parameter names and values) renders as plain text: no request leaves for
    the planted address, and no image or link to it is on the page."""
    require_browser()
    with streamlit_server() as url, chromium() as page:
        planted = []
        page.on(
            "request",
            lambda r: planted.append(r.url) if urlparse(r.url).netloc == "127.0.0.1:9" else None,
        )
        page.goto(url + link.replace(" ", "%20"))
        wait_rendered(page, False)
        assert page.locator('img[src*="127.0.0.1:9"], a[href*="127.0.0.1:9"]').count() == 0
        assert planted == []
        assert page.locator('[data-testid="stException"]').count() == 0
