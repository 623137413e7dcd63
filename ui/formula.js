// visattn's formula element (ui/formulas.py, a Streamlit v2 component): one displayed formula,
// typeset into the same <div> only when its TeX changes. st.latex is re-typeset and rebuilt as a
// React tree of some hundreds of nodes every time its section reruns, changed or not; here an
// unchanged formula costs nothing and a changed one is one innerHTML. The typesetting is
// Streamlit's own (ui/katex.js, before this script). data: {tex, chunk: KaTeX's chunk}.

export default function (component) {
  const { data, parentElement } = component;
  let box = parentElement.querySelector(":scope > .visattn-formula");
  if (!box) {
    box = document.createElement("div");
    box.className = "visattn-formula";
    box.style.overflowX = "auto"; // a long formula scrolls on a phone instead of being cut
    parentElement.appendChild(box);
  }
  if (box.__visattnTex === data.tex) return; // a rerun that left it as it was
  box.__visattnTex = data.tex;
  rehypeKatex(data.chunk).then((plugin) => {
    if (box.__visattnTex === data.tex) box.innerHTML = typeset(plugin, data.tex);
  });
}
