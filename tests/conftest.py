import os
import sys
from pathlib import Path

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
