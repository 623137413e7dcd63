"""Load check: N browser sessions at once against one server, on every page; server memory
before/after.

    .venv/bin/python benchmarks/load.py [--sessions 20]

Starts its own server on a free localhost port, opens N pages concurrently in one headless Chromium
(each page a separate browser context, so a separate Streamlit session), cycling through the app's
pages, waits for each to finish rendering, counts exception elements and failed loads, and prints
the server's resident memory before the first session and after the last (the MiniLM weights are
held once per server through st.cache_resource, so memory should not grow by a model per session).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from browser_util import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

from ui.registry import PAGES as REGISTRY  # noqa: E402

PAGES = [
    p.url_path for p in REGISTRY
]  # "" is home; benchmarks/load_ws.py cycles through the same list


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB (from /proc)."""
    total = 0
    pids = [pid]
    try:
        pids += [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


async def one_session(browser, url: str, i: int) -> tuple[str, bool, float, str]:
    path = PAGES[i % len(PAGES)]
    ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await ctx.new_page()
    t0 = time.monotonic()
    ok, why = True, ""
    try:
        await page.goto(f"{url}/{path}", timeout=180_000)
        await page.wait_for_selector('[data-testid="stApp"]', timeout=180_000)
        if path:
            await page.wait_for_selector(".js-plotly-plot .main-svg", timeout=180_000)
        await page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000
        )
        n_exc = await page.locator('[data-testid="stException"]').count()
        if n_exc:
            ok, why = False, f"{n_exc} exception element(s)"
    except Exception as exc:  # a timeout or a crashed page is a failure to report, not to raise
        ok, why = False, type(exc).__name__
    finally:
        await ctx.close()
    return path or "home", ok, time.monotonic() - t0, why


def server_pid(port: int) -> int | None:
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "streamlit" in cmd and f"--server.port {port}" in cmd:
                return int(p.name)
    return None


async def main_async(n: int) -> int:
    from playwright.async_api import async_playwright

    with streamlit_server() as url:
        port = int(url.rsplit(":", 1)[1])
        pid = server_pid(port)
        before = rss_mb(pid)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            t0 = time.monotonic()
            results = await asyncio.gather(*(one_session(browser, url, i) for i in range(n)))
            wall = time.monotonic() - t0
            await browser.close()
        after = rss_mb(pid)
    errors = [r for r in results if not r[1]]
    print(f"sessions: {n} at once over {len(PAGES)} pages, wall {wall:.1f} s")
    for page in sorted({r[0] for r in results}):
        times = [r[2] for r in results if r[0] == page]
        bad = [r for r in results if r[0] == page and not r[1]]
        print(
            f"  {page:22s} sessions {len(times):2d}  slowest render {max(times):6.1f} s  errors "
            f"{len(bad)}"
        )
    for r in errors:
        print(f"  ERROR {r[0]}: {r[3]}")
    print(f"errors: {len(errors)}")
    print(
        f"server memory (RSS): before {before:.0f} MB, after {after:.0f} MB, growth "
        f"{after - before:.0f} MB"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    sys.exit(asyncio.run(main_async(ap.parse_args().sessions)))
