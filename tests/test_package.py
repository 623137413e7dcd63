"""`pip install .` as a notebook user runs it: the wheel built from pyproject.toml holds the package
`visattn` and nothing else of the repository, installs NumPy, pandas, Plotly, SciPy, safetensors and
tokenizers but neither Streamlit nor torch, and imports from a directory outside the checkout, where
it finds the bundled MiniLM (tests/conftest.py: `installed`, a clean venv)."""

from __future__ import annotations

import json
import subprocess
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))


def requirement_name(requirement: str) -> str:
    """The distribution name of a requirement string such as ``numpy>=2.0``."""
    name = requirement.split(";")[0]
    for mark in "<>=!~[ ":
        name = name.split(mark)[0]
    return name.strip().lower().replace("_", "-")


def tracked(folder: str) -> set[str]:
    """The files git tracks under ``folder`` (the checkout's package as committed)."""
    listed = subprocess.run(
        ["git", "ls-files", folder], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return set(listed.stdout.split())


def test_the_wheel_holds_the_package_and_its_data_only(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    package = {n for n in names if not n.startswith("visattn-")}  # without the .dist-info
    assert package == tracked("visattn")  # every module and data file; no ui/, pages/, deploy/


def test_the_wheel_declares_the_app_as_an_extra(installed):
    wheel = zipfile.ZipFile(installed.wheel)
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    lines = wheel.read(metadata).decode("utf-8").splitlines()
    required = [line.split(": ", 1)[1] for line in lines if line.startswith("Requires-Dist: ")]
    plain = {requirement_name(r) for r in required if "extra ==" not in r}
    extra = {requirement_name(r) for r in required if 'extra == "app"' in r}
    assert "Provides-Extra: app" in lines
    assert plain == {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert "streamlit" in extra and "streamlit" not in plain


def test_it_installs_the_compute_dependencies_and_not_the_app(installed):
    runtime = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert {"numpy", "pandas", "plotly", "scipy", "safetensors", "tokenizers"} <= runtime
    assert runtime <= set(installed.package_only)
    assert not {"streamlit", "torch"} & set(installed.package_only)
    app = {requirement_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["app"]}
    assert "streamlit" in app


PROBE = """
import json, sys
import visattn
from visattn import models
from visattn.models.encoder import model_dir
from visattn.figures import notebook
result = models.load(model_dir()).run("The animal was tired.")
fig = notebook.heads(result.attentions, result.tokens, layer=0)
print(json.dumps({
    "file": visattn.__file__,
    "model_dir": str(model_dir()),
    "shape": list(result.attentions.shape),
    "tokens": result.tokens,
    "cells": len(fig.data),
    "loaded": sorted(m for m in ("streamlit", "torch", "ui") if m in sys.modules),
}))
"""


def test_import_from_outside_the_checkout_finds_the_bundled_model(installed):
    out = json.loads(installed.run("-c", PROBE).stdout)
    venv = installed.python.parent.parent
    assert Path(out["file"]).is_relative_to(venv)  # the installed copy, not the checkout
    assert not Path(out["file"]).is_relative_to(ROOT)
    assert Path(out["model_dir"]).is_relative_to(venv)
    L, H, T, _ = out["shape"]
    assert T == len(out["tokens"]) and out["cells"] == H
    assert out["loaded"] == []
