"""Pretrained model: the real attention of all-MiniLM-L6-v2 (6 layers × 12 heads), computed in NumPy (article 004).

Article 004 draws one head that links "it" to "animal". Here the same sentence goes through a trained encoder:
every one of the 72 heads in a grid, one head large (heatmap, line view, CSV), and a head finder that ranks all
heads by how much a source token attends to a target token. Layers and heads are numbered from 0 (as in the
weight files and bertviz), so "L3·H1" is layer 3, head 1.

Browser budget: the 6 × 12 grid is drawn only up to GRID_ALL_MAX tokens; longer texts show one layer's 12 heads,
pooled to at most GRID_POOL tokens a side (about 1 MB of figure JSON at 128 tokens); the large head is pooled
above HEAD_POOL, and the line view draws a window of LINES_MAX tokens around the source token.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from ui import url_state
from ui.cache_pretrained import head_of_point, model_or_error, run_text
from ui.charts import cached_figure, download_csv, show
from ui.errors import compute, show_error
from ui.frame import explain, font_size, page, presenter
from ui.i18n import t
from visattn import figures
from visattn.models.minilm import INSTALL_COMMAND, MAX_TOKENS
from visattn.token_views import SPECIAL_TOKENS, drop_special, merge_word_pieces, pool, rank_heads

SENTENCE = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
PARAGRAPH = ("The animal didn't cross the street because it was too tired. It had walked all day through the rain, "
             "and the road was wide and busy. A driver stopped her car and waited, but the animal only looked at the "
             "lights. Later a child brought it some water, and it drank slowly before it lay down under a tree. When "
             "the traffic finally stopped, the animal stood up, looked both ways, and crossed the street without any "
             "trouble.")
PRESETS = {"tired": SENTENCE, "wide": WIDE, "chinese": "小明喜欢吃苹果。", "paragraph": PARAGRAPH}
N_LAYERS, N_HEADS = 6, 12   # all-MiniLM-L6-v2
GRID_ALL_MAX = 40           # up to this many tokens, all 72 heads in one figure
GRID_POOL = 128             # one layer's grid: at most this many (pooled) tokens a side
HEAD_POOL = 256             # the large heatmap: at most this many (pooled) tokens a side
LINES_MAX = 64              # the line view: a window of this many tokens
TEXT_CELLS = figures.MAX_TEXT_CELLS
TOP_BARS = 15               # bars in the head finder
STRONG = 0.5                # "a head links source → target" above this weight
TOKENS_SHOWN = 80           # tokens listed in the caption


def head_name(layer: int, head: int) -> str:
    return f"L{layer}·H{head}"


def set_text(text: str) -> None:
    st.session_state["pt_text"] = text


def open_head(layer: int, head: int) -> None:
    st.session_state.update(pt_layer=int(layer), pt_head=int(head))


def open_clicked(chart_key: str) -> None:
    """Bar-click callback (runs before the script): open the clicked bar's head."""
    state = st.session_state.get(chart_key)
    points = (state or {}).get("selection", {}).get("points", [])
    picked = head_of_point(points[0]) if points else None
    if picked is not None and 0 <= picked[0] < N_LAYERS and 0 <= picked[1] < N_HEADS:
        open_head(*picked)


def run_checked(model, text: str):
    """The cached run, or a translated ValueError for text the model cannot read."""
    if not (text or "").strip():
        raise ValueError(t("pretrained.err_empty"))
    try:
        return run_text(model, text, MAX_TOKENS)
    except ValueError:
        raise ValueError(t("pretrained.err_unreadable")) from None


def default_pair(tokens: list[str]) -> tuple[int, int]:
    """Source "it" and target "animal" when present; else the first word and the word after it."""
    words = [i for i, tok in enumerate(tokens) if tok not in SPECIAL_TOKENS] or list(range(len(tokens)))
    src = tokens.index("it") if "it" in tokens else words[0]
    if "animal" in tokens and tokens.index("animal") != src:
        return src, tokens.index("animal")
    others = [i for i in words if i != src]
    return src, (others[0] if others else src)


def bind_pair(tokens: list[str] | None) -> tuple[str, str]:
    """Bind the finder's source and target; back to the defaults when the tokens change, clamped if out of range."""
    auto = default_pair(tokens) if tokens else (0, 0)
    keys = (url_state.bind("pt_src", auto[0], lo=0, hi=MAX_TOKENS - 1),
            url_state.bind("pt_tgt", auto[1], lo=0, hi=MAX_TOKENS - 1))
    if tokens is None:                       # nothing to pick from: keep the URL's values, reset on the next text
        st.session_state["_pt_tokens"] = []
        return keys
    prev = st.session_state.get("_pt_tokens")
    if prev is not None and prev != tokens:
        st.session_state.update(pt_src=auto[0], pt_tgt=auto[1])
    else:
        for key, value in zip(keys, auto):
            if not 0 <= int(st.session_state[key]) < len(tokens):
                url_state.notices().append(key)
                st.session_state[key] = value
    st.session_state["_pt_tokens"] = list(tokens)
    return keys


def unknown_notice(run) -> None:
    """Say which characters became [UNK] (the model reads them all as one and the same token)."""
    unk = [i for i, tok in enumerate(run.tokens) if tok == "[UNK]"]
    if not unk:
        return
    chars = list(dict.fromkeys(run.text[s:e] for s, e in (run.offsets[i] for i in unk) if e > s))
    words = [i for i, tok in enumerate(run.tokens) if tok not in SPECIAL_TOKENS]
    if len(unk) == len(words):
        st.warning(t("pretrained.all_unk", chars=" ".join(chars[:30])), icon="⚠️")
    else:
        st.info(t("pretrained.unk", n=len(unk), chars=" ".join(chars[:30]) + (" …" if len(chars) > 30 else "")),
                icon="ℹ️")


def token_view(run, hide: bool, merge: bool) -> tuple[list[str], np.ndarray]:
    """The tokens and (L, H, T', T') weights as the toggles ask: specials dropped, word pieces merged."""
    tokens, attn = run.tokens, run.attentions
    if hide:
        try:
            v = drop_special(tokens, attn)
            tokens, attn = v.tokens, v.attn
        except ValueError:                   # the text was nothing but [CLS]/[SEP] typed in: keep them
            st.info(t("pretrained.nothing_left"), icon="ℹ️")
    if merge:
        v = merge_word_pieces(tokens, attn)
        tokens, attn = v.tokens, v.attn
    return tokens, attn


def indexed(tokens: list[str]) -> list[str]:
    """Labels "i: token" for long texts: unique without padding repeats, and the hover says where a token is."""
    return [f"{i}: {tok}" for i, tok in enumerate(tokens)]


def grid(tokens: list[str], attn: np.ndarray, k_glayer: str) -> None:
    """All 72 heads in one figure for short texts; one layer's 12 heads (pooled if long) otherwise."""
    T = len(tokens)
    names = dict(value_name=t("common.weight"), query_name=t("common.query"), key_name=t("common.key"))
    if T <= GRID_ALL_MAX:
        explain(t("pretrained.grid_all_intro"))
        fig = cached_figure("head_grid", attn, tokens, tokens, font_size=max(9, font_size() - 3),
                            cell_titles=[head_name(l, h) for l in range(N_LAYERS) for h in range(N_HEADS)],
                            cell_px=85 if not presenter() else 110, **names)
        show(fig, "pretrained_all_heads")
        return
    layer = st.radio(t("pretrained.grid_layer"), list(range(N_LAYERS)), key=k_glayer, horizontal=True,
                     format_func=lambda l: f"L{l}", help=t("pretrained.grid_layer_help", n=GRID_ALL_MAX))
    v = pool(indexed(tokens), attn[layer], GRID_POOL)         # (H, T, T) -> (H, B, B)
    if len(v.tokens) < T:
        st.caption(t("pretrained.pooled", T=T, B=len(v.tokens), size=len(v.groups[0])))
    B = len(v.tokens)
    fig = cached_figure("head_grid", v.attn.reshape(3, 4, B, B), v.tokens, v.tokens, font_size=font_size(),
                        cell_titles=[head_name(layer, h) for h in range(N_HEADS)], cell_px=260, **names)
    show(fig, f"pretrained_grid_L{layer}")


def patterns(attn: np.ndarray) -> dict[str, str]:
    """What the grid shows, measured: heads parked on [CLS], previous- and next-token heads (raw weights)."""
    T = attn.shape[-1]
    i = np.arange(1, T)
    on_cls = attn[..., :, 0].mean(axis=-1)                   # (L, H) mean weight on [CLS]
    prev = attn[..., i, i - 1].mean(axis=-1)                 # (L, H) mean weight on the token before
    nxt = attn[..., i - 1, i].mean(axis=-1)                  # (L, H) mean weight on the token after

    def names(w: np.ndarray) -> str:
        heads = [head_name(int(l), int(h)) for l, h in zip(*np.nonzero(w > STRONG))]
        return t("pretrained.list_sep").join(heads) or t("pretrained.none")

    return dict(n_cls=int((on_cls > STRONG).sum()), prev=names(prev), next=names(nxt))


def finder(tokens: list[str], attn: np.ndarray, k_src: str, k_tgt: str, layer: int, head: int) -> int:
    """Source/target pickers, the ranked heads as clickable bars, and the sentence naming the strong heads."""
    T = len(tokens)
    label = lambda j: f"{j}: {tokens[j]}"  # noqa: E731
    c = st.columns(2)
    src = c[0].selectbox(t("pretrained.source"), list(range(T)), key=k_src, format_func=label,
                         help=t("pretrained.source_help"))
    tgt = c[1].selectbox(t("pretrained.target"), list(range(T)), key=k_tgt, format_func=label,
                         help=t("pretrained.target_help"))
    ranked = rank_heads(attn, src, tgt)
    strong = [hw for hw in ranked if hw.weight > STRONG]
    pair = dict(src=tokens[src], tgt=tokens[tgt])
    if strong:
        heads = t("pretrained.list_sep").join(f"**{head_name(hw.layer, hw.head)}** ({hw.weight:.3f})" for hw in strong)
        st.markdown(t("pretrained.finder_strong", n=len(strong), heads=heads, **pair))
    else:
        best = ranked[0]
        st.markdown(t("pretrained.finder_none", head=head_name(best.layer, best.head), w=f"{best.weight:.3f}", **pair))
    top = ranked[:TOP_BARS]
    opened = next((i for i, hw in enumerate(top) if (hw.layer, hw.head) == (layer, head)), None)
    fig = figures.bars([head_name(hw.layer, hw.head) for hw in top], [hw.weight for hw in top], highlight=opened,
                       ymax=1.1, y_title=t("common.weight"), x_title=t("pretrained.finder_x"), digits=2,
                       title=t("pretrained.finder_title", n=len(top), **pair), font_size=font_size())
    fig.data[0].customdata = [[hw.layer, hw.head] for hw in top]
    chart_key = f"pt_bars_{src}_{tgt}_{layer}_{head}"          # a new chart after each click: no stale selection
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": "visattn_pretrained_finder",
                                                             "scale": 3 if presenter() else 2}}
    st.plotly_chart(fig, width="stretch", config=config, key=chart_key, on_select=partial(open_clicked, chart_key),
                    selection_mode="points")
    c = st.columns([3, 1])
    c[0].caption(t("pretrained.finder_click"))
    c[1].button(t("pretrained.open_top", head=head_name(ranked[0].layer, ranked[0].head)), key="pt_open_top",
                on_click=open_head, args=(ranked[0].layer, ranked[0].head), width="stretch")
    return src


def winograd(model) -> None:
    """Article 004's pair, measured: the best it→animal and it→street heads in "…tired." and in "…wide."."""
    rows = []
    for name, text in (("tired", SENTENCE), ("wide", WIDE)):
        r = run_text(model, text, MAX_TOKENS)
        it, animal, street = (r.tokens.index(w) for w in ("it", "animal", "street"))
        a = rank_heads(r.attentions, it, animal, top=1)[0]
        s = rank_heads(r.attentions, it, street, top=1)[0]
        rows.append((name, a, s))
    cells = {f"{name}_{k}": v for name, a, s in rows
             for k, v in (("a", head_name(a.layer, a.head)), ("aw", f"{a.weight:.2f}"),
                          ("s", head_name(s.layer, s.head)), ("sw", f"{s.weight:.2f}"))}
    wide_a, wide_s = rows[1][1], rows[1][2]
    verdict = "winograd_no_switch" if wide_s.weight < min(wide_a.weight, STRONG) else "winograd_switch"
    explain(t("pretrained.winograd", **cells) + " " + t(f"pretrained.{verdict}"))


def one_head(tokens: list[str], attn: np.ndarray, src: int, k_layer: str, k_head: str, k_lfoc: str) -> None:
    T = len(tokens)
    c = st.columns(2)
    layer = c[0].selectbox(t("pretrained.layer"), list(range(N_LAYERS)), key=k_layer, format_func=lambda l: f"L{l}")
    head = c[1].selectbox(t("pretrained.head"), list(range(N_HEADS)), key=k_head, format_func=lambda h: f"H{h}")
    name = head_name(layer, head)
    w = attn[layer, head]                                    # (T, T)
    v = pool(indexed(tokens) if T > GRID_ALL_MAX else tokens, w, HEAD_POOL)
    if len(v.tokens) < T:
        st.caption(t("pretrained.pooled", T=T, B=len(v.tokens), size=len(v.groups[0])))
    fig = figures.heatmap(v.attn, v.tokens, v.tokens, title=t("pretrained.head_title", head=name),
                          x_title=t("common.key"), y_title=t("common.query"), value_name=t("common.weight"),
                          font_size=font_size())
    show(fig, f"pretrained_{name}")
    if T > TEXT_CELLS:
        st.caption(t("pretrained.hover_numbers"))
    download_csv(w, f"pretrained_L{layer}_H{head}", tokens, tokens, key="pt_csv")

    st.subheader(t("pretrained.lines_header", head=name))
    explain(t("pretrained.lines_intro"))
    only_src = st.toggle(t("pretrained.lines_only_src", token=tokens[src]), key=k_lfoc)
    start = int(np.clip(src - LINES_MAX // 2, 0, max(0, T - LINES_MAX)))
    stop = min(T, start + LINES_MAX)
    lines = w[start:stop, start:stop].copy()                 # (T_w, T_w) the window around the source
    if only_src:
        keep = np.zeros_like(lines)
        keep[src - start] = lines[src - start]
        lines = keep
    if stop - start < T:
        st.caption(t("pretrained.lines_window", a=start, b=stop - 1, T=T, n=LINES_MAX))
    show(figures.line_view(lines[None], tokens[start:stop], head_names=[name], font_size=font_size(),
                           title=t("pretrained.lines_title", head=name)), f"pretrained_lines_{name}")


def missing(reason: str) -> None:
    st.error(t("pretrained.missing"), icon="📦")
    st.code(INSTALL_COMMAND, language="bash")
    st.caption(t("pretrained.missing_note"))
    with st.expander(t("pretrained.missing_detail")):
        st.text(reason)


# --- the page ----------------------------------------------------------------------------------------------------
with page("pretrained"):
    st.title(t("pretrained.title"))
    explain(t("pretrained.intro"))
    st.caption(t("pretrained.numbering"))

    k_text = url_state.bind("pt_text", SENTENCE)
    k_hide = url_state.bind("pt_hide", False)
    k_merge = url_state.bind("pt_merge", False)
    k_glayer = url_state.bind("pt_glayer", 0, options=list(range(N_LAYERS)))
    k_layer = url_state.bind("pt_layer", 3, options=list(range(N_LAYERS)))
    k_head = url_state.bind("pt_head", 1, options=list(range(N_HEADS)))
    k_lfoc = url_state.bind("pt_lfoc", False)

    with st.spinner(t("pretrained.loading")):
        model, reason = model_or_error()
    if model is None:
        bind_pair(None)
        missing(reason)
    else:
        st.caption(t("pretrained.presets"))
        cols = st.columns(len(PRESETS))
        for col, (name, text) in zip(cols, PRESETS.items()):
            col.button(t(f"pretrained.preset_{name}"), on_click=set_text, args=(text,), key=f"pt_preset_{name}",
                       help=text[:120] + ("…" if len(text) > 120 else ""), width="stretch")
        text = st.text_area(t("pretrained.text"), key=k_text, help=t("pretrained.text_help", limit=MAX_TOKENS),
                            height=90)
        c = st.columns(2)
        hide = c[0].toggle(t("pretrained.hide"), key=k_hide, help=t("pretrained.hide_help"))
        merge = c[1].toggle(t("pretrained.merge"), key=k_merge, help=t("pretrained.merge_help"))

        with st.spinner(t("pretrained.running")):
            run = compute("pt_run", run_checked, model, text)
        if run is None:
            bind_pair(None)
        else:
            if run.truncated:
                st.warning(t("pretrained.truncated", n=run.n_tokens_in, limit=MAX_TOKENS), icon="✂️")
            unknown_notice(run)
            tokens, attn = token_view(run, hide, merge)
            T = len(tokens)
            shown = " · ".join(tokens[:TOKENS_SHOWN]) + (" · …" if T > TOKENS_SHOWN else "")
            st.caption(t("pretrained.tokens", n=T, tokens=shown))
            k_src, k_tgt = bind_pair(tokens)

            # ── 1. every head ────────────────────────────────────────────────────────────────────────────
            st.header(t("pretrained.grid_header"))
            grid(tokens, attn, k_glayer)
            explain(t("pretrained.grid_read", **patterns(run.attentions)))

            # ── 2. the head finder ───────────────────────────────────────────────────────────────────────
            st.header(t("pretrained.finder_header"))
            explain(t("pretrained.finder_intro"))
            try:
                src = finder(tokens, attn, k_src, k_tgt, int(st.session_state[k_layer]),
                             int(st.session_state[k_head]))
            except ValueError as exc:          # cannot happen with clamped pickers; shown, never a traceback
                show_error(exc)
                src = 0
            winograd(model)

            # ── 3. one head, large ───────────────────────────────────────────────────────────────────────
            st.header(t("pretrained.one_header"))
            one_head(tokens, attn, src, k_layer, k_head, k_lfoc)
