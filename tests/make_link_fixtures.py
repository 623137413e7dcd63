"""Write ``fixtures/links_<commit>.json``: links of the app as it is in CHECKOUT, and what they
open.

    git worktree add /tmp/old 47b9e2e
    .venv/bin/python tests/make_link_fixtures.py /tmp/old > tests/fixtures/links_47b9e2e.json

For each page the script reads the URL parameters the page binds, then makes three links that each
change a third of them (shuffled with a fixed seed) to another valid value — another option, the
boolean flipped, a number one step inside its bounds, another sentence, a matrix with one entry
changed — the second in Chinese, and a fourth link in presenter mode. It records the URL the page
wrote back and the numbers of warnings, errors and charts. ``test_links.py`` replays them.
"""

import json
import os
import random
import sys

CHECKOUT = sys.argv[1]
sys.path[:0] = [CHECKOUT, f"{CHECKOUT}/tests"]
os.chdir(CHECKOUT)
os.environ["VISATTN_STRICT_I18N"] = "1"

import apptest_util  # noqa: E402  (after the checkout is on the path)
import numpy as np  # noqa: E402
from apptest_util import PAGES, run_page, warnings  # noqa: E402

SENTENCE = "A cat sat on the mat because it was warm."


def bounds(param) -> dict:
    """The options or bounds a parameter's parser closes over (url_state._choice / _number)."""
    parse = param.parse
    cells = [c.cell_contents for c in parse.__closure__ or ()]
    return dict(zip(parse.__code__.co_freevars, cells, strict=True))


def inside(v, lo, hi) -> bool:
    return (lo is None or v >= lo) and (hi is None or v <= hi)


def another_value(param):
    """A valid value other than the default, or None when there is none."""
    d, b = param.default, bounds(param)
    if "options" in b:
        others = [o for o in b["options"] if o != d]
        return random.choice(others) if others else None
    if isinstance(d, bool):
        return not d
    if isinstance(d, int):
        candidates = (d + 1, d - 1, d + 2)
    elif isinstance(d, float):
        candidates = (round(d * 1.5 + 0.25, 2), round(d * 0.5, 2))
    elif isinstance(d, str):
        return SENTENCE if d else "hello"
    elif isinstance(d, list):
        m = np.asarray(d, dtype=float)
        m.flat[0] += 1.0
        return m.tolist()
    else:
        return None
    return next((v for v in candidates if inside(v, b.get("lo"), b.get("hi"))), None)


def opened(name: str, params: dict) -> dict:
    at = run_page(name, params)
    assert not at.exception, (name, params, [e.value for e in at.exception])
    url = {k: at.query_params[k] for k in at.query_params}
    url = {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in url.items()}
    return {
        "page": name,
        "params": params,
        "url": url,
        "warnings": len(warnings(at)),
        "errors": len(at.error),
        "charts": len(charts(at)),
    }


def charts(at) -> list:
    """The charts a run drew: the checkout's own count (its chart element), else Plotly charts."""
    if hasattr(apptest_util, "charts"):
        return apptest_util.charts(at)
    return list(at.get("plotly_chart"))


def main() -> None:
    random.seed(20)
    out = []
    for name in PAGES:
        registry = dict(run_page(name).session_state["_url_registry"])
        keys = [k for k in registry if k not in ("lang", "present")]
        random.shuffle(keys)
        groups = [keys[i::3] for i in range(3)] if len(keys) >= 3 else [keys]
        for n, group in enumerate([*groups, []]):
            params = {"lang": "zh"} if n % 2 else {}
            if n == len(groups):
                params["present"] = "1"
            for k in group:
                v = another_value(registry[k])
                if v is not None:
                    params[k] = registry[k].dump(v)
            out.append(opened(name, params))
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
