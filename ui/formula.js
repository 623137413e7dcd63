// visattn's formula element (ui/formulas.py, a Streamlit v2 component): one displayed formula,
// typeset into the same <div> only when its TeX changes. st.latex is re-typeset and rebuilt as a
// React tree of some hundreds of nodes every time its section reruns, changed or not; here an
// unchanged formula costs nothing and a changed one is one innerHTML. The typesetting is
// Streamlit's own: its rehype-katex plugin (the KaTeX that st.latex uses, whose CSS the page
// already has), loaded from Streamlit's lazily loaded chunk. data: {tex, chunk: that chunk's file
// name}.

let loading = null;

function rehypeKatex(chunk) {
  if (!loading) {
    // Streamlit's entry script lives beside its chunks (./static/js/), under any base path
    const entry = document.querySelector('script[type="module"][src*="static/js/index."]');
    const url = new URL(chunk, entry ? entry.src : new URL("static/js/", document.baseURI));
    loading = import(url.href).then((module) => module.default);
  }
  return loading;
}

const escapeText = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const escapeAttribute = (s) => escapeText(s).replace(/"/g, "&quot;");

// hast's property names back to attributes: className → class, ariaHidden → aria-hidden; SVG's
// camel-cased ones (viewBox, preserveAspectRatio) stay as they are.
function attribute(name) {
  if (name === "className") return "class";
  if (/^(aria|data)[A-Z]/.test(name)) return name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
  return name;
}

// The plugin's output (a hast tree: KaTeX's HTML, its SVG and its MathML) as HTML; every text
// and attribute value escaped, so a token's text in a formula stays text.
function toHtml(node) {
  const children = (node.children || []).map(toHtml).join("");
  if (node.type === "text") return escapeText(node.value);
  if (node.type !== "element") return children;
  const attributes = Object.entries(node.properties || {})
    .filter(([, value]) => value !== null && value !== undefined && value !== false)
    .map(([name, value]) => {
      const text = Array.isArray(value) ? value.join(" ") : String(value);
      return ` ${attribute(name)}="${escapeAttribute(text)}"`;
    })
    .join("");
  return `<${node.tagName}${attributes}>${children}</${node.tagName}>`;
}

// The TeX as one display formula, as st.latex draws it (KaTeX's errors drawn in red, not thrown)
function typeset(plugin, tex) {
  const display = {
    type: "element",
    tagName: "div",
    properties: { className: ["math", "math-display"] },
    children: [{ type: "text", value: tex }],
  };
  const tree = { type: "root", children: [display] };
  plugin({})(tree, { message() {}, fail() {} });
  return toHtml(tree);
}

export default function (component) {
  const { data, parentElement } = component;
  let box = parentElement.querySelector(":scope > .visattn-formula");
  if (!box) {
    box = document.createElement("div");
    box.className = "visattn-formula";
    parentElement.appendChild(box);
  }
  if (box.__visattnTex === data.tex) return; // a rerun that left it as it was
  box.__visattnTex = data.tex;
  rehypeKatex(data.chunk).then((plugin) => {
    if (box.__visattnTex === data.tex) box.innerHTML = typeset(plugin, data.tex);
  });
}
