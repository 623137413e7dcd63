"""A page's figures leaving the app: one zip of every chart the page drew in this run, each as a
standalone interactive HTML file (plotly.js inlined: opens from disk, offline, its in-figure
sliders working) and as its Plotly JSON. Built only when the button is pressed
(:mod:`visattn.export`); a chart's own camera button saves it as a 1920×1080 slide."""

from __future__ import annotations

import html
from functools import partial

import streamlit as st

from visattn import export, lecture
from visattn.display import PRESENTER_FONT

from ..i18n import lang, t
from .tour import charts


def _stem(key: str) -> str:
    """A chart's file name from its key (chart_worked_x → visattn_worked_x)."""
    return "visattn_" + key.removeprefix("chart_")


def zip_button(page_id: str) -> None:
    """The lecture panel's "export figures" button (nothing when the page drew no chart)."""
    figures = {_stem(key): fig for key, fig in charts().items()}
    if not figures:
        return
    st.download_button(
        t("lecture.export_zip", n=len(figures)),
        partial(export.figures_zip, figures, lang()),
        file_name=f"visattn_{page_id}_figures.zip",
        mime="application/zip",
        key="lec_zip",
        icon=":material/inventory_2:",
        on_click="ignore",
        help=t("lecture.export_help"),
    )


# --- slides: every chart as SVG and PNG, 1920×1080, text at a projector's size --------------------
_SLIDES_HTML = """<div id="visattn-slides" data-width="{width}" data-height="{height}"
data-scale="{scale}" data-font="{font}" data-name="{name}"><button type="button" class="visattn-go"
style="background:transparent;cursor:pointer">{label}</button></div><script>{script}</script>"""
# Static (CSP hash): in the browser, Plotly draws each chart of the page again at 1280×720 with its
# text at the presenter's size and saves it at 1.5× (1920×1080) as SVG and PNG; the files go into
# one zip (stored, with their CRC-32) that the browser downloads. Nothing goes to the server.
SLIDES_SCRIPT = r"""(() => {
  const box = document.getElementById("visattn-slides");
  if (!box) return;
  const d = box.dataset;
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (bytes) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const put = (view) => ([at, v, n]) => {
    if (n === 4) view.setUint32(at, v, true); else view.setUint16(at, v, true);
  };
  const zip = (files) => {
    const parts = [], central = [];
    let offset = 0;
    for (const [name, bytes] of files) {
      const path = new TextEncoder().encode(name), crc = crc32(bytes);
      const head = new DataView(new ArrayBuffer(30));
      [[0, 0x04034b50, 4], [4, 20, 2], [14, crc, 4], [18, bytes.length, 4],
        [22, bytes.length, 4], [26, path.length, 2]]
        .forEach(put(head));
      const entry = new DataView(new ArrayBuffer(46));
      [[0, 0x02014b50, 4], [4, 20, 2], [6, 20, 2], [16, crc, 4], [20, bytes.length, 4],
        [24, bytes.length, 4], [28, path.length, 2], [42, offset, 4]]
        .forEach(put(entry));
      parts.push(head, path, bytes);
      central.push(entry, path);
      offset += 30 + path.length + bytes.length;
    }
    const size = central.reduce((s, p) => s + p.byteLength, 0);
    const end = new DataView(new ArrayBuffer(22));
    [[0, 0x06054b50, 4], [8, files.length, 2], [10, files.length, 2], [12, size, 4],
      [16, offset, 4]]
      .forEach(put(end));
    return new Blob([...parts, ...central, end], { type: "application/zip" });
  };
  const bigger = (node, by) => {
    if (Array.isArray(node)) { node.forEach((x) => bigger(x, by)); return; }
    if (!node || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node)) {
      if (/font$/i.test(k) && v && typeof v.size === "number") v.size = Math.round(v.size * by);
      bigger(v, by);
    }
  };
  const bytesOf = (url) => {
    const [head, body] = url.split(",", 2);
    if (head.includes(";base64")) return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
    return new TextEncoder().encode(decodeURIComponent(body));
  };
  const slides = async () => {
    if (!window.Plotly) return;  // loaded with the first chart (Streamlit's Plotly bundle)
    const files = [];
    const boxes = document.querySelectorAll('[data-testid="stMain"] [class*="st-key-chart_"]');
    for (const chart of boxes) {
      const gd = chart.querySelector(".js-plotly-plot");
      if (!gd || !gd.data) continue;
      const key = [...chart.classList].find((c) => c.startsWith("st-key-chart_"));
      const name = "visattn_" + key.slice("st-key-chart_".length);
      const base = (gd._fullLayout && gd._fullLayout.font && gd._fullLayout.font.size) || 13;
      const by = Math.max(1, Number(d.font) / base);
      const figure = JSON.parse(JSON.stringify({ data: gd.data, layout: gd.layout }));
      bigger(figure, by);
      if (figure.layout.font) figure.layout.font.size = Math.round(base * by);
      else figure.layout.font = { size: Math.round(base * by) };
      figure.layout.width = Number(d.width);
      figure.layout.height = Number(d.height);
      for (const format of ["svg", "png"]) {
        const url = await Plotly.toImage(figure, { format, width: Number(d.width),
          height: Number(d.height), scale: Number(d.scale) });
        files.push([`${name}.${format}`, bytesOf(url)]);
      }
    }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(zip(files));
    link.download = d.name;
    document.body.appendChild(link);
    link.click();
    setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 10000);
  };
  box.querySelector("button").onclick = () => { slides(); };
})();"""
SCRIPTS = (SLIDES_SCRIPT,)  # this module's inline scripts (deploy/csp.py: by hash)


def slides_button(page_id: str) -> None:
    """The lecture panel's "slides" button: every chart as SVG and PNG at 1920×1080, in one zip,
    made in the browser."""
    if not charts():
        return
    st.html(
        _SLIDES_HTML.format(
            width=lecture.SLIDE_WIDTH,
            height=lecture.SLIDE_HEIGHT,
            scale=lecture.SLIDE_SCALE,
            font=PRESENTER_FONT,
            name=html.escape(f"visattn_{page_id}_slides.zip"),
            label=html.escape(t("lecture.slides")),
            script=SLIDES_SCRIPT,
        ),
        unsafe_allow_javascript=True,
    )
