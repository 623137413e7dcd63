// visattn's chart element (ui/charts.py, a Streamlit v2 component): one Plotly figure, drawn
// into the same <div> on every rerun with Plotly.react. st.plotly_chart gives a changed figure a
// new element id, so Streamlit mounts a new chart (Plotly.newPlot, a new React tree) each time a
// control changes it; here only what changed is redrawn. data: {figure: JSON string, config,
// plotly: the file name of Streamlit's own Plotly chunk, loaded when no chart has loaded it yet,
// fullScreen: the full-screen button's title, controls: {key: [value, serial, default]} of the
// controls its sliders draw or follow}. Runs after ui/live.js (moveControl, settleControl, …).

let loading = null;

// Four corners: the full-screen button Streamlit's own chart toolbar would have had
const FULL_SCREEN_ICON = {
  width: 1000,
  height: 1000,
  path: "M0 0h380v110H110v270H0zM620 0h380v380H890V110H620zM0 620h110v270h270v110H0z"
    + "M890 620h110v380H620V890h270z",
};

function plotly(chunk) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    // Streamlit's entry script lives beside its chunks (./static/js/), under any base path
    const entry = document.querySelector('script[type="module"][src*="static/js/index."]');
    const url = new URL(chunk, entry ? entry.src : new URL("static/js/", document.baseURI));
    loading = import(url.href).then(() => window.Plotly);
  }
  return loading;
}

function toggleFullScreen(gd) {
  if (document.fullscreenElement) document.exitFullscreen();
  else gd.requestFullscreen();
}

// In full screen the figure takes the screen's height; out of it, its own again.
function fitFullScreen(Plotly, gd) {
  const full = document.fullscreenElement === gd;
  gd.style.background = full ? "white" : "";
  const height = full ? window.innerHeight : gd.__visattnHeight;
  // null: the column's width again (autosize)
  Plotly.relayout(gd, { height, width: full ? window.innerWidth : null });
}

function draw(Plotly, gd, figure, config, controls) {
  const layout = figure.layout || {};
  if (document.fullscreenElement === gd) {
    layout.height = window.innerHeight;
    layout.width = window.innerWidth;
  }
  return Plotly.react(gd, {
    data: figure.data || [],
    layout,
    frames: figure.frames || undefined,
    config,
  }).then(() => settleSliders(Plotly, gd, controls));
}

// --- sliders that are controls (visattn.figures.live: each named by its control's key) ---------

// The index of the step of slider `i` whose value is `text` (-1: none)
function stepOf(gd, i, text) {
  return gd.layout.sliders[i].steps.findIndex((step) => step.value === text);
}

// Slider `i` (shown or following) at the step of value `text`, as if it had been moved there: an
// "update" step's restyle and relayout, or an "animate" step's frame, shown at once
function applyStep(Plotly, gd, i, text) {
  const k = stepOf(gd, i, text);
  if (k < 0 || gd.layout.sliders[i].active === k) return;
  const step = gd.layout.sliders[i].steps[k];
  if (step.method === "animate") {
    const now = { mode: "immediate", frame: { duration: 0, redraw: true }, transition: { duration: 0 } };
    Plotly.animate(gd, step.args[0], now);
    Plotly.relayout(gd, { [`sliders[${i}].active`]: k });
    return;
  }
  const [data, layout, traces] = step.args;
  Plotly.update(gd, data, { ...layout, [`sliders[${i}].active`]: k }, traces);
}

function namedSliders(gd) {
  return (gd.layout.sliders || []).map((slider, i) => [slider.name, i]).filter(([n]) => n);
}

// Once drawn: each slider at the value the browser keeps for its control (ui/live.js); afterwards,
// a slider the reader moves moves its control, and a control moved elsewhere moves this figure.
function settleSliders(Plotly, gd, controls) {
  for (const [name, i] of namedSliders(gd)) {
    if (!controls[name]) continue;
    const text = settleControl(name, controls[name], (t) => stepOf(gd, i, t) >= 0);
    applyStep(Plotly, gd, i, text);
  }
  if (!gd.__visattnMoves) {
    gd.__visattnMoves = true;
    gd.on("plotly_sliderchange", (event) => {
      if (event.interaction && event.slider.name) {
        moveControl(event.slider.name, event.step.value, gd);
      }
    });
    // a figure's own play button walks its frames: a slider of "animate" steps names the frame
    // shown, and its control moves with it
    gd.on("plotly_animatingframe", (event) => {
      for (const [name, i] of namedSliders(gd)) {
        const step = gd.layout.sliders[i].steps.find((s) => s.method === "animate"
          && s.args[0] && s.args[0][0] === event.name);
        if (step) moveControl(name, step.value, gd);
      }
    });
  }
  followControls(gd, (key, text) => {
    for (const [name, i] of namedSliders(gd)) if (name === key) applyStep(Plotly, gd, i, text);
  });
}

// A chart in a panel that does not show (a tab not open: no width) is drawn when it first shows,
// at its width then: drawn hidden, it would cost the page's load and a resize once shown.
function drawWhenShown(Plotly, gd, figure, config, controls) {
  gd.__visattnPending = () => draw(Plotly, gd, figure, config, controls);
  if (gd.clientWidth > 0) drawPending(gd);
}

function drawPending(gd) {
  const pending = gd.__visattnPending;
  gd.__visattnPending = null;
  if (pending) pending();
}

// Once per chart: its width follows its column, its size the full screen.
function watch(Plotly, gd) {
  if (gd.__visattnResize) return;
  // the column's width changes without a window resize (the sidebar, a tab shown). An observer
  // reports the size it starts with too: a chart just drawn at that width is not drawn again.
  gd.__visattnResize = new ResizeObserver(([entry]) => {
    const width = Math.round(entry.contentRect.width);
    const drawn = gd._fullLayout && gd._fullLayout.width;
    if (width > 0 && gd.__visattnPending) drawPending(gd);
    else if (drawn && width > 0 && Math.abs(width - drawn) > 1) Plotly.Plots.resize(gd);
  });
  gd.__visattnResize.observe(gd);
  gd.__visattnFullScreen = () => fitFullScreen(Plotly, gd);
  gd.addEventListener("fullscreenchange", gd.__visattnFullScreen);
}

export default function (component) {
  const { data, parentElement } = component;
  let gd = parentElement.querySelector(":scope > .visattn-chart");
  if (!gd) {
    gd = document.createElement("div");
    gd.className = "visattn-chart";
    gd.style.width = "100%";
    parentElement.appendChild(gd);
  }
  // Streamlit calls this again when only the element's state changes (a rerun starting, ending):
  // Plotly.react compares the arrays of a new figure by identity and would draw it all again
  const drawn = JSON.stringify([data.figure, data.config, data.fullScreen, data.controls]);
  if (gd.__visattnDrawn === drawn) return cleanup(gd);
  gd.__visattnDrawn = drawn;
  const figure = JSON.parse(data.figure);
  gd.__visattnHeight = (figure.layout || {}).height;
  // one button object for the chart's life: a new one each run would make Plotly.react see a new
  // config and draw the whole chart again
  gd.__visattnButton ??= {
    name: "visattn-full-screen",
    icon: FULL_SCREEN_ICON,
    click: () => toggleFullScreen(gd),
  };
  gd.__visattnButton.title = data.fullScreen;
  const config = { ...data.config, modeBarButtonsToAdd: [gd.__visattnButton] };
  plotly(data.plotly).then((Plotly) => {
    watch(Plotly, gd);
    drawWhenShown(Plotly, gd, figure, config, data.controls || {});
  });
  return cleanup(gd);
}

// What Streamlit calls when the chart leaves the page, and also, at once, when a call was
// overtaken by the next one (its data changed again while Plotly loaded): only a chart that has
// left the document is let go.
function cleanup(gd) {
  return () => {
    if (gd.isConnected) return;
    if (gd.__visattnResize) gd.__visattnResize.disconnect();
    gd.__visattnResize = null;
    gd.removeEventListener("fullscreenchange", gd.__visattnFullScreen);
    gd.__visattnFullScreen = null;
    gd.__visattnDrawn = null;
    gd.__visattnPending = null;
    stopFollowing(gd);
    if (window.Plotly) window.Plotly.purge(gd);
    gd.__visattnMoves = false;
  };
}
