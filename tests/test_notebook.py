"""docs/notebook.md runs as written: every ```python block, in order, in one namespace (fig.show()
is a no-op here), and the figures hold the model's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from visattn.errors import InputError
from visattn.figures import notebook
from visattn.reading import attention_rollout

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(
    r"```python\n(.*?)```", (ROOT / "docs" / "notebook.md").read_text("utf-8"), re.S
)


def no_browser(self, *args, **kwargs) -> None:
    """Figure.show in a test: nothing to open."""


@pytest.fixture(scope="module")
def scope():
    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(go.Figure, "show", no_browser)
        for block in BLOCKS:
            exec(compile(block, "docs/notebook.md", "exec"), found)
    return found


def test_the_file_has_the_five_figures():
    assert len(BLOCKS) == 6
    assert all(len([s for s in block.splitlines() if s.strip()]) <= 5 for block in BLOCKS[1:])


def test_every_block_runs_and_draws_the_models_numbers(scope):
    result = scope["result"]
    L, H, T, _ = result.attentions.shape
    grid = scope["fig_layer"]
    assert len(grid.data) == H
    np.testing.assert_allclose(
        np.asarray(grid.data[1].z, float), result.attentions[3, 1], atol=1e-6
    )
    expected = attention_rollout(result.attentions)[-1]
    np.testing.assert_allclose(np.asarray(scope["rolled"], float), expected, atol=1e-6)


def test_a_transformers_tuple_equals_the_array(scope):
    result = scope["result"]
    np.testing.assert_array_equal(notebook.attentions(scope["as_transformers"]), result.attentions)


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


def test_duck_typed_tensors_and_one_layer():
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
