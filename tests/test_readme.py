"""What the README and the CHANGELOG promise a notebook user, run as written."""

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_compute_example_runs():
    block = re.search(
        r"## Using the compute package\n```python\n(.*?)```",
        (ROOT / "README.md").read_text("utf-8"),
        re.S,
    ).group(1)
    rng = np.random.default_rng(0)
    X, W_q, W_k, W_v, W_o = (rng.normal(size=(5, 8)),) + tuple(rng.normal(size=(4, 8, 8)))
    scope = {"X": X, "W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o}
    exec(block, scope)
    assert scope["tr"].weights.shape == (5, 5)
    assert np.allclose(np.triu(scope["tr"].weights, 1), 0)  # causal=True
    assert scope["r"].weights.shape == (4, 5, 5)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("visattn.models.encoder", "BertEncoder"),
        ("visattn.models.layers", "share"),
        ("visattn.display", "byte_size"),
        ("visattn.models.designed", "run"),
        ("visattn.display", "even_grid"),
        ("visattn.figures.colour", "colour_scale"),
        ("visattn.figures.lines", "filtered_lines"),
        ("visattn.controls", "Control"),
    ],
)
def test_the_changelog_names_import(module, name):
    assert hasattr(importlib.import_module(module), name)


def test_designed_is_still_an_attribute_of_the_package():
    from visattn import designed

    assert designed is importlib.import_module("visattn.models.designed")
