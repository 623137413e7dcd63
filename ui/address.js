// visattn's address element (ui/address.py, a Streamlit v2 component): a button or a link that
// uses the address as the browser has it, with the positions of the controls drawn in figures
// (ui/live.js writes them there and tells no server). data: {kind: "button" | "link", label,
// extra: parameters a link adds}. A button sends the address's query to the server (its trigger
// "view"); a link opens the address with its extra parameters in a new tab.

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let element = parentElement.querySelector(":scope > .visattn-address");
  if (!element || element.dataset.kind !== data.kind) {
    if (element) element.remove();
    element = document.createElement(data.kind === "link" ? "a" : "button");
    element.className = "visattn-address visattn-go";
    element.dataset.kind = data.kind;
    parentElement.appendChild(element);
  }
  element.textContent = data.label;
  if (data.kind === "link") {
    element.target = "_blank";
    element.rel = "noopener";
    const address = () => {
      window.visattnFlushAddress?.(); // a figure's slider moved a moment ago
      const url = new URL(location.href);
      for (const [key, value] of Object.entries(data.extra || {})) url.searchParams.set(key, value);
      url.hash = "";
      return url.toString();
    };
    element.href = address();
    // the address as it is when the reader follows the link (a figure's slider moved since)
    element.onclick = () => { element.href = address(); };
    element.onmouseenter = element.onclick;
    element.onfocus = element.onclick;
  } else {
    element.type = "button";
    element.style.width = "100%";
    element.style.cursor = "pointer";
    element.style.background = "transparent";
    element.onclick = () => {
      window.visattnFlushAddress?.();
      setTriggerValue("view", location.search);
    };
  }
  return () => {};
}
