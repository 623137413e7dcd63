"""The server's promises: localhost only, no usage statistics, our own translated navigation, offline icons."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_streamlit_config():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "localhost"
    assert cfg["browser"]["gatherUsageStats"] is False
    assert cfg["client"]["showSidebarNavigation"] is False


def test_no_material_icons():
    # ":material/…:" icons are fetched from the internet; the app must work offline
    for f in [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")]:
        assert not re.search(r":material/", f.read_text(encoding="utf-8")), f


def test_requirements_pinned_and_torch_free():
    for name in ("requirements.txt", "requirements-model.txt", "requirements-test.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                assert "==" in line, f"{name}: {line} is not pinned"
                assert not re.match(r"(torch|transformers)\b", line), f"{name}: {line} must not be a requirement"
