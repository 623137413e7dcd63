// visattn's follower element (ui/follow.py, a Streamlit v2 component): what a page shows beside
// its figures that a control drawn in a figure changes — a table, a displayed formula, a note —
// with one version per position of that control, the one shown swapped in the browser as the
// figure's slider moves (ui/live.js), nothing asked of the server. data: {control, server:
// [value, serial, default], variants: {value text: {notes?, metric?, table?, tex?, caption?,
// csv?}}, chunk: KaTeX's chunk, csv?: {label, name}: its download button}. A table is {columns,
// index, rows} of texts; a note is {level, html}, made safe by the server. Or, with data.chart, a
// CSV button for what that chart shows now ({chart: its key, index, columns, label, name}). Runs
// after ui/live.js and ui/katex.js.

// The element's look, once per document: a table as st.table draws one (scrolling past 420 px,
// as the page's tables of many rows do), notes as st.warning, st.info and st.success do, the
// download button as st.download_button.
const FOLLOW_STYLE = `
.visattn-table-box { max-height: 420px; overflow: auto; margin-bottom: 0.75rem; }
.visattn-table { border-collapse: collapse; font-size: 0.875rem; font-variant-numeric: tabular-nums; }
.visattn-table th, .visattn-table td { padding: 0.25rem 0.5rem; text-align: right;
  border-bottom: 1px solid rgba(49, 51, 63, 0.1); white-space: nowrap; }
.visattn-table thead th { color: rgba(49, 51, 63, 0.6); font-weight: 400; position: sticky; top: 0;
  background: white; }
.visattn-table tbody th { color: rgba(49, 51, 63, 0.6); font-weight: 400; }
.visattn-metric-label { font-size: 0.875rem; color: rgb(49, 51, 63); }
.visattn-metric-value { font-size: 2.25rem; line-height: 1.4; }
.visattn-follow-tex { overflow-x: auto; } /* a long formula scrolls on a phone, uncut */
.visattn-follow-caption { font-size: 0.875rem; color: rgba(49, 51, 63, 0.6); }
.visattn-note { padding: 1rem; border-radius: 0.5rem; margin-bottom: 1rem; line-height: 1.6; }
.visattn-warning { background: rgba(255, 227, 18, 0.1); color: rgb(146, 108, 5); }
.visattn-info { background: rgba(28, 131, 225, 0.1); color: rgb(0, 66, 128); }
.visattn-success { background: rgba(33, 195, 84, 0.1); color: rgb(23, 114, 51); }
.visattn-csv { font: inherit; font-size: 0.875rem; padding: 0.25rem 0.75rem; border-radius: 0.5rem;
  border: 1px solid rgba(49, 51, 63, 0.2); background: white; color: inherit; cursor: pointer;
  min-height: 2.5rem; }
.visattn-icon { font-family: "Material Symbols Rounded"; font-weight: 400; font-style: normal;
  font-size: 1.25em; line-height: 1; vertical-align: -0.25em; display: inline-block;
  font-feature-settings: "liga"; }
.visattn-csv:hover { border-color: rgb(255, 75, 75); color: rgb(255, 75, 75); }`;

function installStyle() {
  if (document.getElementById("visattn-follow-style")) return;
  const style = document.createElement("style");
  style.id = "visattn-follow-style";
  style.textContent = FOLLOW_STYLE;
  document.head.appendChild(style);
}

function tableHtml(table) {
  const head = ["", ...table.columns].map((c) => `<th>${escapeText(c)}</th>`).join("");
  const body = table.rows
    .map((row, i) => {
      const cells = row.map((c) => `<td>${escapeText(c)}</td>`).join("");
      return `<tr><th>${escapeText(table.index[i])}</th>${cells}</tr>`;
    })
    .join("");
  return `<div class="visattn-table-box"><table class="visattn-table"><thead><tr>${head}</tr>`
    + `</thead><tbody>${body}</tbody></table></div>`;
}

function download(variant, csv) {
  const blob = new Blob([variant.csv], { type: "text/csv" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = csv.name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function show(box, data, text) {
  const variant = data.variants[text];
  if (!variant || box.__visattnShown === text) return;
  box.__visattnShown = text;
  box.dataset.control = data.control; // what it follows and where it stands (for tests, and CSS)
  box.dataset.shown = text;
  const parts = [];
  for (const note of variant.notes || []) {
    parts.push(`<div class="visattn-note visattn-${note.level}">${note.html}</div>`);
  }
  if (variant.metric) {
    parts.push(
      `<div class="visattn-metric"><div class="visattn-metric-label">`
        + `${escapeText(variant.metric.label)}</div><div class="visattn-metric-value">`
        + `${escapeText(variant.metric.value)}</div></div>`,
    );
  }
  if (variant.table) parts.push(tableHtml(variant.table));
  if (variant.tex !== undefined) parts.push('<div class="visattn-follow-tex"></div>');
  if (variant.caption) {
    parts.push(`<div class="visattn-follow-caption">${escapeText(variant.caption)}</div>`);
  }
  box.innerHTML = parts.join("");
  if (variant.csv !== undefined && data.csv) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "visattn-csv";
    button.textContent = `⤓ ${data.csv.label}`;
    button.onclick = () => download(data.variants[box.__visattnShown], data.csv);
    box.appendChild(button);
  }
  if (variant.tex !== undefined) {
    rehypeKatex(data.chunk).then((plugin) => {
      const slot = box.querySelector(".visattn-follow-tex");
      if (slot && box.__visattnShown === text) slot.innerHTML = typeset(plugin, variant.tex);
    });
  }
}

// --- a chart's matrix as CSV, made in the browser from what the chart shows now ---------------------

// A number as Python's "%.6g" writes it (the CSV downloads of the server write so)
function g6(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "";
  if (v === 0) return "0";
  const e = Math.floor(Math.log10(Math.abs(v)));
  if (e < -4 || e >= 6) {
    const [m, x] = v.toExponential(5).split("e");
    const n = Number(x);
    const mantissa = m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m;
    return `${mantissa}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return String(Number(v.toPrecision(6)));
}

// A CSV cell as pandas quotes one: in quotes, quotes doubled, when it holds a comma, a quote or a
// line break
function csvCell(text) {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function chartCsv(data) {
  const gd = document.querySelector(`.st-key-${data.chart} .js-plotly-plot`);
  // Plotly's decoded trace: the figure sends z packed (base64), and a step's update packs it too
  const z = gd && gd._fullData && gd._fullData[0] ? gd._fullData[0].z : null;
  if (!z) return null;
  const lines = [["", ...data.columns].map(csvCell).join(",")];
  data.index.forEach((name, i) => {
    const row = Array.from(z[i] || [], (v) => g6(v));
    lines.push([csvCell(name), ...row].join(","));
  });
  return lines.join("\n") + "\n";
}

function chartCsvButton(box, data) {
  if (box.querySelector(".visattn-csv")) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "visattn-csv";
  button.textContent = `⤓ ${data.label}`;
  button.onclick = () => {
    const text = chartCsv(data);
    if (text !== null) download({ csv: text }, data);
  };
  box.appendChild(button);
}

export default function (component) {
  const { data, parentElement } = component;
  installStyle();
  let box = parentElement.querySelector(":scope > .visattn-follow");
  if (!box) {
    box = document.createElement("div");
    box.className = "visattn-follow";
    parentElement.appendChild(box);
  }
  const drawn = JSON.stringify(data);
  if (data.chart) {
    if (box.__visattnDrawn !== drawn) box.replaceChildren();
    box.__visattnDrawn = drawn;
    chartCsvButton(box, data);
    return () => {};
  }
  if (box.__visattnDrawn !== drawn) {
    box.__visattnDrawn = drawn;
    box.__visattnShown = null;
    const text = settleControl(data.control, data.server, (t) => t in data.variants);
    show(box, data, text);
    followControls(box, (key, t) => {
      if (key === data.control) show(box, data, t);
    });
  }
  return () => {
    if (!box.isConnected) stopFollowing(box);
  };
}
