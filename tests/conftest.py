import os
import sys
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
