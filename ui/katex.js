// Displayed formulas typeset with Streamlit's own KaTeX: its rehype-katex plugin (the KaTeX that
// st.latex uses, whose CSS the page already has), loaded from Streamlit's lazily loaded chunk.
// Shared by ui/formula.js and ui/follow.js (each element's script starts with it).

let loadingKatex = null;

function rehypeKatex(chunk) {
  if (!loadingKatex) {
    // Streamlit's entry script lives beside its chunks (./static/js/), under any base path
    const entry = document.querySelector('script[type="module"][src*="static/js/index."]');
    const url = new URL(chunk, entry ? entry.src : new URL("static/js/", document.baseURI));
    loadingKatex = import(url.href).then((module) => module.default);
  }
  return loadingKatex;
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

