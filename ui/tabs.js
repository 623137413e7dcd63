// visattn's tab follower (ui/controls.py's tabs, a Streamlit v2 component that shows nothing).
// st.tabs switches between its tabs in the browser without telling the server; this tells it which
// tab is open (state "open"), which reruns the page: the URL then holds the tab, and the run draws
// it. data: {key: the tab container's key, options: the control's value of each tab, open: the
// value the server has}.

function openTab(key) {
  const list = document.querySelector(`.st-key-${key} [role="tablist"]`);
  if (!list) return -1;
  const tabs = Array.from(list.querySelectorAll('[role="tab"]'));
  return tabs.findIndex((tab) => tab.getAttribute("aria-selected") === "true");
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  parentElement.__visattnTabs = data;
  if (parentElement.__visattnListener) return cleanup(parentElement);
  // a click or a key (the arrows move between tabs) in the tab list: once the tab has switched
  const listener = (event) => {
    const now = parentElement.__visattnTabs;
    const tablist = `.st-key-${now.key} [role="tablist"]`;
    if (!event.target.closest || !event.target.closest(tablist)) return;
    setTimeout(() => {
      const open = openTab(now.key);
      if (open >= 0 && open < now.options.length && now.options[open] !== now.open) {
        setStateValue("open", now.options[open]);
      }
    }, 0);
  };
  parentElement.__visattnListener = listener;
  document.addEventListener("click", listener, true);
  document.addEventListener("keyup", listener, true);
  return cleanup(parentElement);
}

// Called when the element leaves the page, and also, at once, when a call is overtaken by the
// next: only an element that has left the document lets its listener go.
function cleanup(parentElement) {
  return () => {
    if (parentElement.isConnected) return;
    document.removeEventListener("click", parentElement.__visattnListener, true);
    document.removeEventListener("keyup", parentElement.__visattnListener, true);
    parentElement.__visattnListener = null;
  };
}
