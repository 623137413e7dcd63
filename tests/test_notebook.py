"""docs/notebook.ipynb runs as written: its code cells in order, here in one namespace (each cell's
last expression kept, as Jupyter shows it), and top to bottom by nbclient in a real Jupyter kernel
of a clean venv where visattn is installed from its wheel (tests/conftest.py: `installed`). The
figures hold the model's numbers, titled as the arguments count; the one call takes what
transformers returns, torch tensors included."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from visattn.errors import InputError
from visattn.figures import notebook
from visattn.reading import attention_rollout

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"
CELLS = [
    "".join(cell["source"])
    for cell in json.loads(NOTEBOOK.read_text("utf-8"))["cells"]
    if cell["cell_type"] == "code"
]
PLOTLY_MIME = "application/vnd.plotly.v1+json"


def run_cell(source: str, scope: dict) -> object:
    """One cell as Jupyter runs it: its statements, then its last expression's value (or None)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "docs/notebook.ipynb", "exec"), scope)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "docs/notebook.ipynb", "eval"), scope)


@pytest.fixture(scope="module")
def ran() -> tuple[dict, list]:
    scope: dict = {}
    shown = [run_cell(source, scope) for source in CELLS]
    return scope, shown


def cell_titles(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def test_the_first_cell_draws_a_layer_in_one_call(ran):
    scope, shown = ran
    result = scope["result"]
    L, H, T, _ = result.attentions.shape
    layer = 3
    fig = shown[1]
    assert CELLS[1].strip().splitlines()[-1].startswith("heads(")
    assert len(fig.data) == H
    for head in range(H):  # the cell titled L3·Hh is attentions[3, h]
        np.testing.assert_allclose(
            np.asarray(fig.data[head].z, float), result.attentions[layer, head], atol=1e-6
        )
        assert f"L{layer}·H{head}" in cell_titles(fig)[head]


def test_the_model_grid_and_the_other_figures(ran):
    scope, shown = ran
    result = scope["result"]
    L, H, T, _ = result.attentions.shape
    grid, _, rollout, _, _ = shown[2:]
    assert len(grid.data) == L * H
    assert [t.split("<")[0] for t in cell_titles(grid)] == [
        f"L{l}·H{h}" for l in range(L) for h in range(H)
    ]
    expected = attention_rollout(result.attentions)[-1]
    np.testing.assert_allclose(np.asarray(rollout.data[-1].z, float), expected, atol=1e-6)


def test_no_weights_says_to_load_the_eager_attention(ran, capsys):
    scope, _ = ran
    run_cell(CELLS[-1], scope)
    assert 'attn_implementation="eager"' in capsys.readouterr().out
    tokens = scope["result"].tokens
    for empty in (None, (), (None, None)):
        with pytest.raises(InputError, match="eager"):
            notebook.heads(empty, tokens)


def as_transformers(w: np.ndarray, dtype=torch.float32) -> tuple[torch.Tensor, ...]:
    """(L, H, T, T) as transformers returns it: L tensors (batch 1, H, T, T) that need grad."""
    return tuple(torch.tensor(layer[None], dtype=dtype, requires_grad=True) for layer in w)


def test_the_one_call_takes_transformers_torch_tensors(ran):
    scope, _ = ran
    result = scope["result"]
    w, tokens = result.attentions, result.tokens
    from_torch = notebook.heads(as_transformers(w), tokens)
    from_numpy = notebook.heads(w, tokens)
    assert len(from_torch.data) == len(from_numpy.data)
    for a, b in zip(from_torch.data, from_numpy.data, strict=True):
        np.testing.assert_array_equal(np.asarray(a.z), np.asarray(b.z))
    halves = notebook.attentions(as_transformers(w, torch.bfloat16))  # NumPy has no bfloat16
    bf16 = torch.tensor(w, dtype=torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(halves, bf16)


class FakeTensor:
    """What a torch tensor offers, without torch: detach, cpu, numpy."""

    def __init__(self, a: np.ndarray):
        self.a = a
        self.dtype = "torch.float32"

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def test_duck_typed_tensors_one_layer_and_bad_shapes():
    rng = np.random.default_rng(0)
    w = rng.random((2, 3, 4, 4)).astype(np.float32)
    w /= w.sum(-1, keepdims=True)
    batch = [FakeTensor(np.stack([np.zeros_like(w[l]), w[l]])) for l in range(2)]  # (2, H, T, T)
    np.testing.assert_array_equal(notebook.attentions(batch, batch=1), w)
    np.testing.assert_array_equal(notebook.attentions(w[0]), w[:1])  # (H, T, T) -> (1, H, T, T)
    with pytest.raises(InputError):
        notebook.attentions(batch, batch=2)
    with pytest.raises(InputError):
        notebook.attentions(np.zeros((2, 3, 4, 5)))
    with pytest.raises(InputError, match="3 tokens"):
        notebook.heads(w, ["a", "b", "c"])
    last = notebook.heads(w, list("abcd"), layer=-1)
    assert cell_titles(last)[0].startswith("L1·H0")


# Appended to the notebook in the kernel: where visattn and the interpreter come from.
PROBE = "import sys, visattn\nprint(visattn.__file__)\nprint(sys.executable)"
RUNNER = """
import sys
import nbformat
from nbclient import NotebookClient

nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=None, kernel_name="python3").execute()
nbformat.write(nb, sys.argv[2])
"""


def outputs_of(cell: dict) -> list[dict]:
    return cell.get("outputs", [])


def text(value: str | list[str]) -> str:
    """A notebook's text field, stored as one string or as a list of lines."""
    return "".join(value) if isinstance(value, list) else value


def test_nbclient_runs_the_notebook_in_a_kernel_of_the_installed_package(installed):
    nb = json.loads(NOTEBOOK.read_text("utf-8"))
    probe = {"cell_type": "code", "id": "probe", "metadata": {}, "source": PROBE}
    nb["cells"].append(probe | {"execution_count": None, "outputs": []})
    given, done = installed.home / "notebook.ipynb", installed.home / "executed.ipynb"
    given.write_text(json.dumps(nb), "utf-8")
    installed.run("-c", RUNNER, str(given), str(done))
    code = [c for c in json.loads(done.read_text("utf-8"))["cells"] if c["cell_type"] == "code"]
    assert not [o for c in code for o in outputs_of(c) if o["output_type"] == "error"]
    where, python = text(code[-1]["outputs"][0]["text"]).split()
    venv = installed.python.parent.parent
    assert Path(where).is_relative_to(venv) and Path(python).parent == installed.python.parent
    # every figure cell shows an interactive Plotly figure; plotly.js is in the notebook once
    figures = code[1:-2]  # after the renderer's cell, before the error's and the probe's
    assert all(any(PLOTLY_MIME in o.get("data", {}) for o in outputs_of(c)) for c in figures)
    html = [
        text(o["data"].get("text/html", "")) for c in code for o in outputs_of(c) if "data" in o
    ]
    assert sum("plotly.js v" in h for h in html) == 1
    # nothing of plotly.js is fetched; plotly's notebook output always adds MathJax from a CDN,
    # which typesets LaTeX only (visattn's figures have none; offline, that script just fails)
    fetched = [url for h in html for url in re.findall(r'<script src="([^"]+)"', h)]
    assert all("mathjax" in url for url in fetched)
    assert 'attn_implementation="eager"' in text(code[-2]["outputs"][0]["text"])
