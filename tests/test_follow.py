"""ui.follow's notes: a locale text's markdown made HTML in Python, as st.warning would draw it."""

from apptest_util import read_out
from hypothesis import given
from hypothesis import strategies as st

from ui.follow import note_html


def test_bold_and_icons_are_drawn_and_the_rest_escaped():
    html = note_html("Widen **σ**, or press :material/target: Fit σ <b>&")
    assert html == (
        'Widen <strong>σ</strong>, or press <span class="visattn-icon" aria-hidden="true">'
        "target</span> Fit σ &lt;b&gt;&amp;"
    )
    assert read_out(html) == "Widen σ, or press  Fit σ &lt;b&gt;&amp;"


@given(st.text())
def test_no_text_makes_markup(text):
    """Whatever the text (a user's token is one), the only tags are the note's own."""
    html = note_html(text)
    for tag in (
        "<strong>",
        "</strong>",
        '<span class="visattn-icon" aria-hidden="true">',
        "</span>",
    ):
        html = html.replace(tag, "")
    assert "<" not in html and ">" not in html
