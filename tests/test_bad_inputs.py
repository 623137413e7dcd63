"""The bad-input catalogue: one table of what users (and tampered links) throw at the pages.

Each case opens a page as a fresh session with the given URL parameters, optionally edits a matrix
cell, and checks that the page says something clear (an error or a notice that names the problem),
shows no exception, and that the rest of the page still works: the navigation is there and at least
the stated number of figures is drawn. Odd-but-valid inputs (emoji, mixed scripts) must simply work.
"""

from dataclasses import dataclass, field

import pytest
from apptest_util import assert_clean, figures, follower_notes, run_page, unescape

LONG_600 = " ".join(["word"] * 600)
LONG_300 = " ".join(["cat"] * 300)
EMOJI = "🙂🐈 went 🚀"
MIXED = "The 小猫 didn't cross 马路 because it was tired"


@dataclass(frozen=True)
class Case:
    name: str
    page: str
    params: dict
    # "message": an error or warning must say something; "ok": must just work
    expect: str = "message"
    says: tuple = ()  # words the message must contain (any language-neutral token: a key or number)
    charts: int = 1  # figures still drawn
    edit: tuple | None = None  # (editor key, row, column name, value) applied after the first run
    lang: str = "en"
    more: dict = field(default_factory=dict)


CASES = [
    # kernel regression
    # -------------------------------------------------------------------------------------
    Case("kernel: query is text", "kernel_regression", {"kr_q": "abc"}, says=("kr_q",)),
    # σ ≤ 0: tab ① says so instead of its figures (② and ③ are drawn once opened)
    Case("kernel: sigma 0", "kernel_regression", {"kr_sigma": "0"}, charts=0),
    Case("kernel: sigma negative", "kernel_regression", {"kr_sigma": "-1"}, charts=0),
    Case("kernel: sigma NaN", "kernel_regression", {"kr_sigma": "nan"}),
    Case(
        "kernel: sigma 1e308 (valid: every key weighs the same)",
        "kernel_regression",
        {"kr_sigma": "1e308"},
        expect="ok",
    ),
    Case(
        "kernel: unknown kernel", "kernel_regression", {"kr_kernel": "cosine"}, says=("kr_kernel",)
    ),
    Case(
        "kernel: preset path traversal",
        "kernel_regression",
        {"kr_preset": "../../etc/passwd"},
        says=("kr_preset",),
    ),
    Case(
        "kernel: text in the table link",
        "kernel_regression",
        {"kr_data": "1,abc;2,3"},
        says=("kr_data",),
    ),
    Case("kernel: empty table link", "kernel_regression", {"kr_data": ""}, says=("kr_data",)),
    Case(
        "kernel: text cell",
        "kernel_regression",
        {},
        edit=("kr_data__ed0", 0, "weight (jin)", "heavy"),
    ),
    Case(
        "kernel: empty cell (NaN)",
        "kernel_regression",
        {},
        edit=("kr_data__ed0", 1, "weight (jin)", None),
    ),
    Case(
        "kernel: 1e308 cell", "kernel_regression", {}, edit=("kr_data__ed0", 2, "waist (cm)", 1e308)
    ),
    Case(
        "kernel: inf cell",
        "kernel_regression",
        {},
        edit=("kr_data__ed0", 2, "waist (cm)", float("inf")),
    ),
    Case("kernel: X link 3×3", "kernel_regression", {"kr_X": "1,2,3;4,5,6;7,8,9"}),
    Case("kernel: X link 1×4", "kernel_regression", {"kr_X": "1,2,3,4"}),
    Case("kernel: V link 3×1", "kernel_regression", {"kr_V": "1;2;3"}),
    Case(
        "kernel: 65-row table link",
        "kernel_regression",
        {"kr_data": ";".join(f"{i},{i}" for i in range(65))},
    ),
    Case(
        "kernel: sigma 1e-200 (Gaussian overflows)",
        "kernel_regression",
        {"kr_sigma": "1e-200"},
        says=("1e-200",),
    ),
    # single head
    # --------------------------------------------------------------------------------------------
    Case("single: empty sentence", "single_head", {"sh_view": "sentence", "sh_text": ""}, charts=0),
    Case(
        "single: 600 tokens",
        "single_head",
        {"sh_view": "sentence", "sh_text": LONG_600},
        says=("600",),
        charts=0,
    ),
    Case(
        "single: emoji sentence",
        "single_head",
        {"sh_view": "sentence", "sh_text": EMOJI},
        expect="ok",
    ),
    Case(
        "single: mixed CJK/Latin",
        "single_head",
        {"sh_view": "sentence", "sh_text": MIXED},
        expect="ok",
    ),
    Case("single: d_k = 0", "single_head", {"sh_view": "edit", "sh_dk": "0"}, charts=0),
    Case("single: temperature 0", "single_head", {"sh_temp": "0"}, says=("sh_temp",)),
    Case("single: temperature inf", "single_head", {"sh_temp": "inf"}, says=("sh_temp",)),
    Case(
        "single: negative d_model", "single_head", {"sh_view": "edit", "sh_d": "-4"}, says=("sh_d",)
    ),
    Case("single: unknown part", "single_head", {"sh_view": "<script>"}, says=("sh_view",)),
    Case(
        "single: text in W_Q",
        "single_head",
        {"sh_view": "edit"},
        edit=("sh_wq__ed0", 2, "1", "abc"),
        says=("3",),
    ),
    Case("single: ragged X link", "single_head", {"sh_x": "1,2;3"}, says=("sh_x",)),
    Case(
        "single: sizes without matrices",
        "single_head",
        {"sh_view": "edit", "sh_T": "12", "sh_d": "12", "sh_dk": "12"},
        expect="ok",
        charts=7,
    ),
    Case(
        "single: heavy sqrt link",
        "single_head",
        {"sh_view": "sqrt", "sh_vdk": "1024", "sh_nkeys": "256"},
        says=("sh_nkeys",),
        charts=4,
    ),
    Case(
        "single: 600 tokens in Chinese",
        "single_head",
        {"sh_view": "sentence", "sh_text": LONG_600},
        says=("600", "64"),
        charts=0,
        lang="zh",
    ),
    # multi-head
    # ---------------------------------------------------------------------------------------------
    Case("multi: empty text", "multi_head", {"mh_text": ""}, charts=0),
    Case("multi: 300 tokens", "multi_head", {"mh_text": LONG_300}, says=("300",), charts=0),
    Case(
        "multi: heads do not divide d_model",
        "multi_head",
        {"mh_src": "random", "mh_d": "30", "mh_h": "4"},
        says=("30", "4"),
        charts=0,
    ),
    Case("multi: negative heads", "multi_head", {"mh_h": "-3"}, says=("mh_h",)),
    Case(
        "multi: unknown words",
        "multi_head",
        {"mh_text": "The wug didn't blick because it was tired."},
    ),
    # the designed model's Chinese lexicon knows 小猫 and 马路, so a Chinese class's own words
    # pass: no unknown-word notice
    Case("multi: mixed CJK/Latin", "multi_head", {"mh_text": MIXED}, expect="ok"),
    Case("multi: emoji", "multi_head", {"mh_text": EMOJI}, expect="ok"),
    Case("multi: layer 7", "multi_head", {"mh_layer": "7"}, says=("mh_layer",)),
    Case(
        "multi: 2400 tokens (within the box, counted)",
        "multi_head",
        {"mh_text": "w " * 2400},
        says=("2400",),
        charts=0,
    ),
    Case(
        "multi: 5001 characters (over the box, refused)",
        "multi_head",
        {"mh_text": "w" * 5001},
        says=("text",),
    ),
    Case(
        "multi: explorer heads do not divide", "multi_head", {"mh_sH": "97"}, says=("12288", "97")
    ),
    Case(
        "multi: 300 tokens in Chinese",
        "multi_head",
        {"mh_text": LONG_300},
        says=("300",),
        charts=0,
        lang="zh",
    ),
    # positional encoding
    # -------------------------------------------------------------------------------------
    Case("positional: odd d_model", "positional_encoding", {"pe_d": "7"}, says=("7",), charts=0),
    Case("positional: zero positions", "positional_encoding", {"pe_n": "0"}, charts=0),
    Case(
        "positional: d_model 4000",
        "positional_encoding",
        {"pe_d": "4000"},
        says=("2048",),
        charts=0,
    ),
    Case(
        "positional: 5000 positions",
        "positional_encoding",
        {"pe_n": "5000"},
        says=("4096",),
        charts=0,
    ),
    Case("positional: negative positions", "positional_encoding", {"pe_n": "-5"}, says=("pe_n",)),
    Case(
        "positional: empty custom sentence",
        "positional_encoding",
        {"pe_sec": "order", "pe_pair": "custom", "pe_a": ""},
        charts=0,
    ),
    # pretrained
    # ----------------------------------------------------------------------------------------------
    Case("pretrained: empty text", "pretrained", {"pt_text": ""}, charts=0),
    Case("pretrained: 600 tokens truncated", "pretrained", {"pt_text": LONG_600}, says=("512",)),
    Case("pretrained: emoji only", "pretrained", {"pt_text": "🙂🙂🙂"}, says=("[UNK]",)),
    Case("pretrained: head 99", "pretrained", {"pt_head": "99"}, says=("pt_head",)),
    Case("pretrained: nothing readable", "pretrained", {"pt_text": "\u200b"}, charts=0),
    Case(
        "pretrained: only [CLS] typed, hidden",
        "pretrained",
        {"pt_text": "[CLS]", "pt_hide": "1"},
        says=("[CLS]",),
    ),
    Case(
        "pretrained: text over the character limit",
        "pretrained",
        {"pt_text": "word " * 1001},
        says=("pt_text",),
    ),
    Case("pretrained: token 600 of 16", "pretrained", {"pt_src": "600"}, says=("pt_src",)),
    # every page: garbage in the shared parameters
    # ------------------------------------------------------------
    *[
        Case(
            f"{p}: lang and present garbage",
            p,
            {"lang": "xx", "present": "maybe", "junk": "1"},
            says=("lang", "present", "junk"),
            charts=0 if p == "home" else 1,
        )
        for p in (
            "home",
            "kernel_regression",
            "single_head",
            "multi_head",
            "positional_encoding",
            "pretrained",
        )
    ],
]


def messages(at) -> list[str]:
    """Alerts as read on screen: markdown escapes (``mh\\_h``) undone; a note that follows a
    figure's slider (no estimate at this σ) counts as the page's."""
    kinds = ("error", "warning", "info")
    alerts = [unescape(str(e.value)) for kind in kinds for e in at.get(kind)]
    return alerts + [note for kind in kinds for note in follower_notes(at, kind)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case):
    at = run_page(case.page, {"lang": case.lang} | case.params)
    assert_clean(at)
    if case.edit:
        key, row, col, value = case.edit
        at.session_state[key] = {
            "edited_rows": {row: {col: value}},
            "added_rows": [],
            "deleted_rows": [],
        }
        at.run()
        assert_clean(at)
    said = messages(at)
    if case.expect == "message":
        assert said, "the page said nothing about the bad input"
        text = " ".join(said)
        for word in case.says:
            assert word in text, f"{word!r} not in {said}"
    else:
        assert not at.error, said
    # the rest of the page still works
    assert len(at.get("page_link")) >= 6
    assert len(figures(at)) >= case.charts


def test_catalogue_is_large_enough():
    assert len(CASES) >= 30
