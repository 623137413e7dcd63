"""Shared helpers for the per-page AppTest modules."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from ui.charts import CHART_NAME
from ui.follow import FOLLOW_NAME
from ui.formulas import FORMULA_NAME
from ui.frame import panel_key
from ui.registry import PAGES as REGISTRY
from visattn.lessons import kernel_regression, modern_attention, positional_encoding

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_MODELS = ROOT / "tests" / "fixtures" / "models"  # tiny checkpoints of every family
# the newer families' (tests/make_family_fixtures.py), one folder each: whatever is there
FAMILY_MODELS = FIXTURE_MODELS / "families"
FAMILY_IDS = tuple(sorted(p.name for p in FAMILY_MODELS.iterdir() if (p / "config.json").is_file()))
PAGES = {p.id: p.path for p in REGISTRY}
# The pages whose sections are tabs (ui.frame.tabs), and the control of each one's open tab
TABS = {
    "kernel_regression": kernel_regression.TAB,
    "positional_encoding": positional_encoding.CONTROLS["pe_sec"],
    "modern_attention": modern_attention.CONTROLS["mo_sec"],
}


def run_page(
    name: str, params: dict | None = None, timeout: float = 60, state: dict | None = None
) -> AppTest:
    """Run one page script as its first request, with ``params`` in the URL (and ``state`` in the
    session already: e.g. an expander open, without a second run)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if name != "home":
        at.switch_page(PAGES[name])  # the page runs with app.py as entrypoint, as on the server
    for k, v in (params or {}).items():
        at.query_params[k] = v
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    return at


def panel(at: AppTest, page: str, section: str) -> Block:
    """The panel a tabbed page (``TABS``) draws ``section`` in (ui.frame.tabs)."""
    suffix = "-" + panel_key(TABS[page], section)

    def walk(node):
        if getattr(getattr(node, "proto", None), "id", "").endswith(suffix):
            yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    (found,) = walk(at.main)
    return found


def open_section(at: AppTest, page: str):
    """The section a tabbed page (``TABS``) shows: its tab bar's open tab, whose panel the style
    rule leaves shown (ui.frame.panel_rule)."""
    return TABS[page].options[open_tab_index(at)]


def open_tab_index(at: AppTest) -> int:
    """The index of the tab the browser opens first (the one tab container's default)."""
    found = []

    def walk(node):
        if getattr(node, "type", None) == "tab_container":
            found.append(node.proto.tab_container.default_tab_index)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    (index,) = found
    return index


def assert_clean(at: AppTest) -> None:
    """No exception element on the page."""
    assert not at.exception, [e.value for e in at.exception]


def charts(at: AppTest) -> list:
    """The page's chart elements (ui.charts.show's, and st.plotly_chart's where a chart takes
    clicks), in page order."""
    return [e for e in at.get("bidi_component") if e.proto.component_name == CHART_NAME] + list(
        at.get("plotly_chart")
    )


def chart_spec(element) -> str:
    """A chart element's figure as the JSON string sent to the browser."""
    if element.type == "plotly_chart":
        return element.proto.spec
    return json.loads(element.proto.json)["figure"]


def chart_config(element) -> dict:
    """A chart element's Plotly config (the camera button's options among them)."""
    if element.type == "plotly_chart":
        return json.loads(element.proto.config)
    return json.loads(element.proto.json)["config"]


def is_chart(element) -> bool:
    return element.type == "plotly_chart" or (
        element.type == "bidi_component" and element.proto.component_name == CHART_NAME
    )


def formulas(at: AppTest) -> list[str]:
    """The TeX of the page's displayed formulas (ui.formulas), in page order."""
    return [
        json.loads(e.proto.json)["tex"]
        for e in at.get("bidi_component")
        if e.proto.component_name == FORMULA_NAME
    ]


def followers(at: AppTest) -> dict[str, dict]:
    """{name: data} of the page's elements that follow a control drawn in a figure (ui.follow), in
    page order."""
    return {
        e.key.removeprefix("follow_"): json.loads(e.proto.json)
        for e in at.get("bidi_component")
        if e.proto.component_name == FOLLOW_NAME and e.key.startswith("follow_")
    }


def shown(data: dict) -> dict:
    """What a follower element shows as the server drew it: its version at the control's value."""
    return data["variants"][data["server"][0]]


_NOT_READ = re.compile(r'<span[^>]*aria-hidden="true"[^>]*>[^<]*</span>')  # an icon
_TAG = re.compile(r"<[^>]+>")


def read_out(note_html: str) -> str:
    """A note's HTML as a screen reader reads it: no tags, no icon."""
    return _TAG.sub("", _NOT_READ.sub("", note_html))


def follower_notes(at: AppTest, level: str = "warning") -> list[str]:
    """The notes of ``level`` that the page's followers show as the server drew them (a note that a
    control drawn in a figure changes, e.g. no estimate at this σ), as text."""
    return [
        read_out(note["html"])
        for data in followers(at).values()
        for note in shown(data).get("notes", [])
        if note["level"] == level
    ]


def figures(at: AppTest) -> list[dict]:
    """The Plotly figures on the page as dicts."""
    return [json.loads(chart_spec(c)) for c in charts(at)]


def array(v) -> np.ndarray:
    """A Plotly array as sent to the browser (plain list or base64 typed array) → ndarray."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        shape = v.get("shape")
        if shape:
            a = a.reshape([int(s) for s in str(shape).split(",")])
        return a
    return np.asarray(v, dtype=float)


def texts(at: AppTest) -> str:
    """All markdown, titles, captions and alerts of the page joined (for language checks)."""
    parts = []
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "error",
        "warning",
        "info",
        "success",
    ):
        parts += [str(e.value) for e in at.get(kind)]
    return "\n".join(parts)


def errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.error]


def warnings(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.warning]


# ---- what a user reads, for the language checks --------------------------------------------------

# Names and symbols that stay as they are in Chinese (case-insensitive): models, methods, file
# formats, math.
NAMES = {
    "minilm",
    "bert",
    "gpt",
    "softmax",
    "rope",
    "alibi",
    "layernorm",
    "transformer",
    "numpy",
    "python",
    "adam",
    "plotly",
    "pytorch",
    "torch",
    "hugging",
    "face",
    "csv",
    "png",
    "url",
    "cls",
    "sep",
    "unk",
    "pad",
    "mask",
    "nadaraya",
    "watson",
    "epanechnikov",
    "attention",
    "is",
    "all",
    "you",
    "need",
    "d2l",
    "sin",
    "cos",
    "exp",
    "ln",
    "log",
    "tanh",
    "max",
    "min",
    "argmax",
    "relu",
    "gelu",
    "wordpiece",
    "tensor",
    "t2t",
    "bertviz",
    "pip",
    "install",
    "the",
    "gt",
    "v2",
    "safetensors",
    "visattn",
    "english",
    "abnar",  # cited authors (Abnar & Zuidema 2020, Kobayashi et al. 2020)
    "zuidema",
    "kobayashi",
    "elhage",  # Elhage et al. 2021, Olsson et al. 2022 (the decoder's induction heads)
    "olsson",
    "kb",  # kilobyte (kB = 10³ B), a unit symbol like MB and GB
    "et",
    "al",
    "viridis",  # a palette's name (purple → blue → green → yellow), kept in Chinese
    "llama",
    "id",
    "ids",
    "qkv",
    "ffn",
    "mlp",
    "rnn",
    "lstm",
    "cnn",
    "api",
    "xavier",
    "pe",
    "streamlit",
    "iqr",
    # the modern-attention page's models, methods and cited authors (names, kept in Chinese)
    "flashattention",
    "streamingllm",
    "deepseek",
    "mistral",
    "vllm",
    "shazeer",
    "ainslie",
    "radford",
    "brown",
    "touvron",
    "dubey",
    "jiang",
    "xiao",
    "dao",
    # the model families a server may read and what they add (models.mechanisms); Gemma 2 and 3,
    # gpt-oss: models that alternate windowed and full layers
    "gemma",
    "phi",
    "olmo",
    "oss",
    "norm",
    "rmsnorm",
    "logit",
    "mini",  # Phi-4-mini
    "nvidia",  # whose KB are KiB (1,024 B), a unit symbol like kB
    "kib",
}
_PROSE_FIELDS = {
    "label",
    "help",
    "body",
    "placeholder",
    "options",
    "caption",
    "title",
    "text",
    "display_value",
}
_SKIP_PROTOS = {
    "Code",
    "PageLink",
}  # the link box (a URL) and page links (checked by their label only)


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _plotly_words(spec: dict) -> list[str]:
    """Every word a figure shows besides its data: titles, axis and colour-bar titles, legend names,
    annotations and hover templates (with their %{…} placeholders removed)."""
    out = []
    layout = spec.get("layout", {})

    def title(d):
        t = (d or {}).get("title")
        return t.get("text", "") if isinstance(t, dict) else (t or "")

    out.append(title(layout))
    for k, v in layout.items():
        if isinstance(v, dict) and (
            k.startswith("xaxis") or k.startswith("yaxis") or k == "coloraxis"
        ):
            out.append(title(v))
            out.append(title(v.get("colorbar")))
    out += [a.get("text", "") for a in layout.get("annotations", []) or []]
    out += [
        s.get("label", "") for sl in layout.get("sliders", []) or [] for s in sl.get("steps", [])
    ]
    out += [
        (sl.get("currentvalue") or {}).get("prefix", "") for sl in layout.get("sliders", []) or []
    ]
    for tr in spec.get("data", []):
        if tr.get("showlegend", True) is not False:
            out.append(str(tr.get("name", "")))
        out.append(tr.get("hovertemplate", "") or "")
        out.append(title(tr.get("colorbar")))
    return out


def _follower_words(data: dict) -> list[str]:
    """Every word a follower element (ui.follow) shows at any position: notes, metric labels, table
    headers and row names, captions and its button (not the formula's TeX)."""
    if "chart" in data:  # a chart's CSV button (ui.follow.chart_csv)
        return [data["label"]]
    out = [data.get("csv", {}).get("label", "")]
    for version in data["variants"].values():
        out += [read_out(note["html"]) for note in version.get("notes", [])]
        if "metric" in version:
            out.append(version["metric"]["label"])
        if "table" in version:
            out += version["table"]["columns"] + version["table"]["index"]
        out.append(version.get("caption", ""))
    return out


def visible_text(at: AppTest) -> list[str]:
    """The strings a user sees on the page (prose, labels, help, options, alerts, table headers,
    figure words), without LaTeX, the link box, or the contents of text boxes (the user's own
    words)."""
    out = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "DESCRIPTOR"):
            continue
        kind = proto.DESCRIPTOR.name
        if kind in _SKIP_PROTOS or (
            kind == "Markdown" and proto.element_type in (3, 4)
        ):  # 3 = code, 4 = LaTeX
            if kind == "PageLink":
                out.append(proto.label)
            continue
        if hasattr(node, "type") and is_chart(node):  # st.plotly_chart's, and ui.charts.show's
            out += _plotly_words(json.loads(chart_spec(node)))
            continue
        if getattr(node, "type", None) == "bidi_component" and (
            node.proto.component_name == FOLLOW_NAME
        ):
            out += _follower_words(json.loads(node.proto.json))
            continue
        if kind == "Arrow":
            df = node.value if hasattr(node, "value") else None
            if df is not None:
                df = getattr(df, "data", df)
                out += [str(c) for c in getattr(df, "columns", [])] + [
                    str(i) for i in getattr(df, "index", [])
                ]
            continue
        for field, value in proto.ListFields():
            if field.name in _PROSE_FIELDS:
                values = (
                    [value]
                    if isinstance(value, str) or not hasattr(value, "__len__")
                    else list(value)
                )
                out += [v if isinstance(v, str) else getattr(v, "content", "") for v in values]
    return [s for s in out if s]


def user_words(at: AppTest) -> set[str]:
    """Words the user typed or chose as content: values of text boxes (they may be English in a
    Chinese UI)."""
    words = set()
    for kind in ("text_input", "text_area"):
        for w in at.get(kind):
            words |= {x.lower() for x in re.findall(r"[A-Za-z']+", str(w.value or ""))}
    return words


# Inline math and code, URLs, hover placeholders, HTML tags, Streamlit directives; quoted examples
# (“The animal …”) and an English term in full-width brackets after its Chinese one, as d2l-zh
# writes 查询（query）.
_NOT_PROSE = re.compile(
    r"\$[^$]*\$|`[^`]*`|https?://\S+|%\{[^}]*\}|<[^>]+>|:[a-z_]+\[|:material/[a-z_]+:"
    r"|“[^”]*”|‘[^’]*’|\"[^\"]*\"|（[A-Za-z][A-Za-z ,.'-]*）"
)


def unescape(markdown: str) -> str:
    """Markdown as read on screen: backslash escapes and the zero-width spaces that break autolinks
    removed."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u200b", "")


def english_words(at: AppTest, allowed: set[str] = frozenset()) -> dict[str, str]:
    """{English word: where it was seen} over what the user sees, less names, symbols and the user's
    own words."""
    texts = visible_text(at)
    quoted = {
        w.lower()
        for s in texts
        for q in re.findall(r"“([^”]*)”", s)
        for w in re.findall(r"[A-Za-z']+", q)
    }
    mine = user_words(at) | quoted  # example sentences and their word pieces are content
    ok = NAMES | {a.lower() for a in allowed}
    found = {}
    for s in texts:
        if s.lstrip().startswith("<style"):
            continue
        s = re.sub(r"<script\b.*?</script>", " ", s, flags=re.S)  # code, not shown (the link box's)
        clean = re.sub(_NOT_PROSE, " ", unescape(s))
        for w in re.findall(r"[A-Za-z0-9_'’]+", clean):
            if (
                not re.fullmatch(r"[A-Za-z]{2,}(?:['’][A-Za-z]+)?", w)
                or w.lower() in ok
                or re.fullmatch(r"[A-Z]{2,4}", w)
            ):
                continue  # not a word, a name, or a symbol such as QK or MHA
            if any(
                w.lower() in m for m in mine
            ):  # the user's or the example's own words, and their word pieces
                continue
            found.setdefault(w, s[:80])
    return found


def metrics(at) -> dict[str, str]:
    """The page's metrics as {label: value}."""
    return {m.label: m.value for m in at.metric}


def qp(at) -> dict:
    """The page's URL parameters as {name: text}."""
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def mechanism_sentences(model, lang: str = "en") -> list[str]:
    """The sentence the pages show for each mechanism ``model``'s family adds that changes its
    maps (its config's ``mechanisms`` through visattn.display.map_mechanisms), as the locale
    writes it."""
    from visattn.display import map_mechanisms

    table = json.loads((ROOT / "ui" / "locales" / lang / "models.json").read_text())["mechanisms"]
    names = getattr(model.config, "mechanisms", ())
    return [table[name].replace("{kind}", kind) for name, kind in map_mechanisms(names)]
