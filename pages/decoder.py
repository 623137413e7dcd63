"""Decoder: causal attention token by token, the KV cache, and a designed induction circuit that
copies (issue 13)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import url_state
from ui.cache_decoder import cache, cache_figure, circuits, cost, mask
from ui.charts import cached_figure, download_csv, show
from ui.errors import compute
from ui.frame import explain, font_size, page, section
from ui.i18n import t
from ui.text import escape
from visattn import figures
from visattn.figures import decoder as dfig
from visattn.lessons import decoder as lesson
from visattn.models import induction

SOURCE = {"repeat": "decoder.src_repeat", "text": "decoder.src_text"}
SHAPE = {
    "gpt2_small_1k": "decoder.shape_gpt2",
    "gpt3_2k": "decoder.shape_gpt3_2k",
    "gpt3_8k": "decoder.shape_gpt3_8k",
}
MODEL = {"gpt2_small": "decoder.model_gpt2", "gpt3_175b": "decoder.model_gpt3"}
EXAMPLE = {"harry": "decoder.ex_harry", "owl": "decoder.ex_owl", "nonsense": "decoder.ex_nonsense"}


def pct(x: float) -> str:
    return "—" if x != x else f"{100 * x:.0f} %"


def use_example(text: str) -> None:
    st.session_state.update(dec_text=text, dec_src="text")


@section
def mask_view(key: tuple[str, ...]) -> None:  # 1. the causal mask
    st.header(t("decoder.mask_h"))
    explain(t("decoder.mask_text"))
    m = mask(key)
    show(
        figures.heatmap(
            m.weights,
            list(key),
            list(key),
            masked=m.future,
            title=t("decoder.mask_title"),
            x_title=t("common.key"),
            y_title=t("common.query"),
            value_name=t("common.weight"),
            font_size=font_size(),
        ),
        "decoder_causal",
    )
    st.caption(t("decoder.mask_caption", n=m.n_future, largest=f"{m.largest_future:g}"))


@section
def cache_view(
    key: tuple[str, ...],
) -> None:  # 2. generation with a KV cache: the step slider reruns this alone
    st.header(t("decoder.cache_h"))
    explain(t("decoder.cache_text"))
    url_state.bind("dec_step", 5, lo=1, hi=induction.N_POSITIONS)
    st.session_state["dec_step"] = min(int(st.session_state["dec_step"]), len(key))
    c = cache(
        key, st.slider(t("decoder.step"), 1, len(key), key="dec_step", help=t("decoder.step_help"))
    )
    show(
        cache_figure(
            key,
            c.step + 1,
            font_size(),
            key_title=t("decoder.k_cache"),
            value_title=t("decoder.v_cache"),
            weight_title=t("decoder.new_weights"),
            token_name=t("common.token"),
            dim_name=t("common.dimension"),
            value_name=t("common.value"),
            weight_name=t("common.weight"),
            step_prefix=t("decoder.step_prefix"),
            play=t("decoder.play"),
            pause=t("decoder.pause"),
        ),
        "decoder_kv_cache",
    )
    k1, k2, k3 = st.columns(3)
    k1.metric(t("decoder.keys_read"), c.keys_read)
    k2.metric(t("decoder.cache_rows"), f"{c.cached_rows} / {len(key)}")
    k3.metric(t("decoder.new_token"), f"“{key[c.step]}”")
    st.caption(t("decoder.cache_equal", diff=f"{c.max_difference:.1e}"))


@section
def cost_view() -> (
    None
):  # 3. what the cache saves, and what it costs: the model radio reruns this alone
    st.header(t("decoder.cost_h"))
    explain(t("decoder.cost_text"))
    shape = st.radio(
        t("decoder.shape"),
        list(SHAPE),
        format_func=lambda s: t(SHAPE[s]),
        horizontal=True,
        key=url_state.bind("dec_shape", "gpt3_2k", options=list(SHAPE)),
    )
    k = cost(shape)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(t("decoder.keys_last"), f"{k.keys_last:,}")
    m2.metric(t("decoder.saving"), f"{k.saving:,.0f} ×")
    m3.metric(t("decoder.cache_memory"), f"{k.cache_gb:,.3g} GB")
    m4.metric(t("decoder.per_token"), f"{k.per_token_kb:,.0f} KB")
    st.markdown(
        t(
            "decoder.cost_numbers",
            d=f"{k.d_model:,}",
            L=k.n_layers,
            T=f"{k.T:,}",
            cached=k.total_cached_tex,
            uncached=k.total_uncached_tex,
        )
    )
    cols = [t("decoder.n_tokens", n=f"{n:,}") for n in k.memory_tokens]
    st.dataframe(
        pd.DataFrame(k.memory_gb, index=[t(MODEL[m]) for m in k.memory_models], columns=cols),
        width="content",
        column_config={"_index": st.column_config.TextColumn(t("decoder.memory_table"))}
        | {c: st.column_config.NumberColumn(format="%.3f") for c in cols},
    )
    show(
        dfig.cost_curves(
            k.cost.work_cached,
            k.cost.work_uncached,
            cached_name=t("decoder.with_cache"),
            uncached_name=t("decoder.without_cache"),
            x_title=t("decoder.cost_x"),
            y_title=t("decoder.cost_y"),
            font_size=font_size(),
        ),
        "decoder_cost",
    )


@section
def circuit_view(
    key: tuple[str, ...], second_start: int | None
) -> None:  # 4. the induction circuit: the ablation switch reruns this alone
    st.header(t("decoder.circuit_h"))
    explain(t("decoder.circuit_text"))
    ablate = st.toggle(
        t("decoder.ablate"), key=url_state.bind("dec_ablate", False), help=t("decoder.ablate_help")
    )
    if (pair := compute("dec_circuit", circuits, key)) is None:
        return
    (s, tokens, T), (a1, a2, a3, a4) = (pair[ablate], list(key), len(key)), st.columns(4)
    a1.metric(t("decoder.acc_first"), pct(s.acc_first), help=t("decoder.acc_first_help"))
    a2.metric(
        t("decoder.acc_second"),
        pct(s.acc_second),
        help=t("decoder.acc_second_help"),
        delta=f"{100 * (s.knocked_second - s.intact_second):+.0f} %" if s.ablated else None,
    )
    a3.metric(t("decoder.chance"), f"{100 * s.chance:.1f} %")
    a4.metric(t("decoder.last_guess"), f"“{s.last_guess}”")
    st.markdown(
        t(
            "decoder.guess_sentence",
            token=f"“{escape(tokens[-1])}”",
            guess=f"“{escape(s.last_guess)}”",
        )
    )
    st.caption(
        t("decoder.ablated_note")
        if s.ablated
        else t(
            "decoder.measured", prev=f"{s.prev_weight:.2f}", target=f"{s.mean_target_weight:.2f}"
        )
    )
    show(
        cached_figure(
            "head_grid",
            s.result.weights.reshape(1, 2, T, T),
            tokens,
            tokens,
            font_size=font_size(),
            cell_titles=(t("decoder.head_previous"), t("decoder.head_induction")),
            value_name=t("common.weight"),
            query_name=t("common.query"),
            key_name=t("common.key"),
            cell_px=420,
        ),
        "decoder_heads",
    )
    download_csv(s.result.weights[1, 0], "decoder_induction_weights", tokens, tokens)
    st.subheader(t("decoder.lines_h"))
    explain(t("decoder.lines_text"))
    show(
        cached_figure(
            "line_view",
            s.line_weights,
            tokens,
            head_names=(t("decoder.head_induction"),),
            font_size=font_size(),
            value_name=t("common.weight"),
        ),
        "decoder_induction_lines",
    )
    st.subheader(t("decoder.loss_h"))
    show(
        dfig.loss_curves(
            range(1, T),
            {t("decoder.intact"): s.intact.loss, t("decoder.knocked_out"): s.knocked_out.loss},
            second_start=second_start,
            second_label=t("decoder.second_copy"),
            x_title=t("common.position"),
            y_title=t("decoder.loss_y"),
            chance=s.chance_loss,
            chance_label=t("decoder.uniform"),
            font_size=font_size(),
        ),
        "decoder_loss",
    )
    cols = [
        t("common.position"),
        t("common.token"),
        t("decoder.col_next"),
        t("decoder.col_guess"),
        t("decoder.col_right"),
        t("decoder.col_p"),
    ]
    table = pd.DataFrame(
        [
            (i, tok, nxt, g, "" if ok is None else "✓" if ok else "✗", p)
            for i, tok, nxt, g, ok, p in s.rows
        ],
        columns=cols,
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={cols[5]: st.column_config.NumberColumn(format="%.3f")},
    )


with page("decoder"):
    st.title(t("decoder.title"))
    explain(t("decoder.intro"))

    # ── the sequence every section reads ─────────────────────────────────────────────────────────
    c1, c2, c3 = st.columns([2, 2, 1])
    source = c1.radio(
        t("decoder.source"),
        list(SOURCE),
        format_func=lambda s: t(SOURCE[s]),
        horizontal=True,
        key=url_state.bind("dec_src", "repeat", options=list(SOURCE)),
    )
    n = c2.slider(
        t("decoder.n"),
        2,
        induction.MAX_REPEAT,
        disabled=source != "repeat",
        help=t("decoder.n_help"),
        key=url_state.bind("dec_n", lesson.DEFAULT_N, lo=2, hi=induction.MAX_REPEAT),
    )
    seed = c3.number_input(
        t("decoder.seed"),
        0,
        9999,
        disabled=source != "repeat",
        key=url_state.bind("dec_seed", lesson.DEFAULT_SEED, lo=0, hi=9999),
    )
    text = st.text_input(
        t("decoder.text"),
        max_chars=url_state.MAX_TEXT,
        help=t("decoder.text_help"),
        disabled=source != "text",
        key=url_state.bind("dec_text", lesson.HARRY),
    )
    st.caption(t("decoder.examples"))
    for col, (name, sentence) in zip(st.columns(len(EXAMPLE) + 1), lesson.EXAMPLES.items()):
        col.button(
            t(EXAMPLE[name]),
            on_click=use_example,
            args=(sentence,),
            key=f"dec_ex_{name}",
            help=f"“{sentence}”",
            width="stretch",
        )
    with st.expander(t("decoder.vocab", n=induction.N_VOCAB)):
        st.code(" ".join(induction.VOCAB), language=None, wrap_lines=True)
    tokens = compute("dec_tokens", lesson.sequence, source, n, seed, text)

    if tokens is not None:
        key = tuple(tokens)
        mask_view(key)
        cache_view(key)
        cost_view()
        circuit_view(key, n + 1 if source == "repeat" else None)
