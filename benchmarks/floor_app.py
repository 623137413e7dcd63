"""The floor of interact.py: the least a Streamlit control costs in this browser on this machine.

One slider that reruns the whole script and one inside an ``st.fragment``, each redrawing a
three-bar Plotly chart. No page of the app can answer a control faster than this; interact.py
measures it between the pages of the same run and divides by it."""

import plotly.graph_objects as go
import streamlit as st


def bars(v: int, key: str) -> None:
    st.plotly_chart(
        go.Figure(
            go.Bar(x=["a", "b", "c"], y=[v, 100 - v, 50]), layout={"title": {"text": f"v = {v}"}}
        ),
        key=key,
    )


st.title("floor")
bars(st.slider("whole run", 0, 100, 50, key="floor_page"), "floor_page_chart")


@st.fragment
def section() -> None:
    bars(st.slider("section", 0, 100, 50, key="floor_section"), "floor_section_chart")


section()
