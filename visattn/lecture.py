"""The lecture as data: the URL parameters every page takes for a lecture (a tour and its step,
predict-then-reveal, the handout, the speaker view, the slide format) and the built-in tour.

The frame binds :data:`CONTROLS` on every page beside ``lang`` and ``present``. The built-in tour
follows the articles — kernel regression → single head → √d_k → multi-head → positions → MiniLM →
reading → decoder → a decoder that learns → today's LLMs — and names each step's title and notes
by locale key (``lecture.json``), so the same tour reads in either language.
"""

from __future__ import annotations

from .controls import Control, table
from .display import PRESENTER_FONT
from .tour import MAX_LINK, MAX_STEPS, Step, Tour

BUILTIN = "intro"  # ?tour=intro: the built-in tour
HIDE_MODES = (0, 1, 2)  # 0 everything shown, 1 numbers hidden, 2 numbers and heatmap colours
SLIDE_FORMATS = ("png", "svg")  # what a chart's camera button saves

# --- the controls (the frame binds them on every page) -------------------------------------------
TOUR = Control(
    "tour", "", max_chars=MAX_LINK
)  # "intro", or a lecturer's tour packed (visattn.tour)
STEP = Control("step", 1, lo=1, hi=MAX_STEPS)  # 1-based
HIDE = Control("hide", 0, options=HIDE_MODES, labels="lecture.hide_modes")
HANDOUT = Control("handout", False)
SPEAKER = Control("speaker", False)
SLIDE_FORMAT = Control("slide", "png", options=SLIDE_FORMATS, labels="lecture.slide_formats")
CONTROLS = table(TOUR, STEP, HIDE, HANDOUT, SPEAKER, SLIDE_FORMAT)
# The lecture's own parameters and the frame's: never part of a step's view.
LECTURE_KEYS = frozenset(CONTROLS) | {"lang", "present"}

# Plotly's own words on a chart (its toolbar's tooltips, its download notices), by its English:
# their translations are the table common.plotly_ui, which every chart's config hands to Plotly.
PLOTLY_WORDS = (
    "Download plot as a PNG",
    "Download plot",
    "Preparing image - this may take a few seconds",
    "Image download succeeded",
    "Sorry, there was a problem downloading your image!",
    "Zoom",
    "Pan",
    "Box Select",
    "Lasso Select",
    "Zoom in",
    "Zoom out",
    "Autoscale",
    "Reset axes",
    "Double-click to zoom back out",
    "Show closest data on hover",
    "Compare data on hover",
    "Toggle Spike Lines",
)
LABELS = {"common.plotly_ui": PLOTLY_WORDS}

# A chart's slide, 1920×1080 pixels: the slides zip lays each chart out at 1280×720 with the
# presenter's text and saves it at 1.5×, so its text is as large on the slide as on the projector.
SLIDE_WIDTH, SLIDE_HEIGHT, SLIDE_SCALE = 1280, 720, 1.5
SLIDE_SCALES = (1.5, 2.0, 2.5, 3.0, 4.0)  # each divides 1920 × 1080 into whole CSS pixels


def slide_layout(font: float) -> tuple[int, int, float]:
    """What a chart's camera button saves a chart drawn with ``font``-px text at: the layout's width
    and height in CSS pixels and the scale, 1920×1080 pixels in all, the text at least as large as
    presenter mode's (``PRESENTER_FONT`` px at 1.5×). The camera saves the chart as it is drawn, so
    a chart drawn with smaller text is laid out smaller and scaled up more (a canvas truncates its
    size: only scales that give whole pixels)."""
    wanted = SLIDE_SCALE * PRESENTER_FONT / font
    scale = next((s for s in SLIDE_SCALES if s >= wanted), SLIDE_SCALES[-1])
    size = SLIDE_SCALE / scale
    return round(SLIDE_WIDTH * size), round(SLIDE_HEIGHT * size), scale


# --- the built-in tour ----------------------------------------------------------------------------
INTRO = Tour(
    (
        Step(
            "kernel_regression",
            "",
            "chart_kernel_weights_bars",
            "lecture.intro_01_title",
            "lecture.intro_01_notes",
        ),
        Step(  # σ is the curve's own slider: the step opens it narrow, on the noisy curve
            "kernel_regression",
            "kr_preset=noisy&kr_sigma=0.2",
            "chart_kernel_fitted_curve",
            "lecture.intro_02_title",
            "lecture.intro_02_notes",
        ),
        Step(
            "single_head", "", "chart_worked_x", "lecture.intro_03_title", "lecture.intro_03_notes"
        ),
        Step(
            "single_head",
            "",
            "chart_worked_weights",
            "lecture.intro_04_title",
            "lecture.intro_04_notes",
        ),
        Step(
            "single_head",
            "sh_view=sqrt",
            "chart_sqrt_hist_raw",
            "lecture.intro_05_title",
            "lecture.intro_05_notes",
        ),
        Step(
            "single_head",
            "sh_view=sqrt",
            "chart_sqrt_max_weight",
            "lecture.intro_06_title",
            "lecture.intro_06_notes",
        ),
        Step("multi_head", "", "", "lecture.intro_07_title", "lecture.intro_07_notes"),
        Step("positional_encoding", "", "", "lecture.intro_08_title", "lecture.intro_08_notes"),
        Step("pretrained", "", "", "lecture.intro_09_title", "lecture.intro_09_notes"),
        Step("reading", "", "", "lecture.intro_10_title", "lecture.intro_10_notes"),
        Step("decoder", "", "", "lecture.intro_11_title", "lecture.intro_11_notes"),
        Step(
            "decoder",
            "",
            "chart_decoder_kv_cache",
            "lecture.intro_12_title",
            "lecture.intro_12_notes",
        ),
        Step("training", "", "", "lecture.intro_13_title", "lecture.intro_13_notes"),
        Step(
            "modern_attention",
            "mo_sec=cache",
            "chart_kv_cache_vs_context",
            "lecture.intro_14_title",
            "lecture.intro_14_notes",
        ),
    ),
    builtin=BUILTIN,
)
BUILTINS = {BUILTIN: INTRO}
