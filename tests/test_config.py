"""The server's promises: localhost only, no usage statistics, our own translated navigation,
icons that need no font on the viewer's machine, and the room settings: no error
details, allowed hosts, bounded messages, no cache clearing, no look-ups."""

import base64
import re
import tokenize
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cfg() -> dict:
    return tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())


def test_streamlit_config():
    cfg = _cfg()
    assert cfg["server"]["address"] == "localhost"
    assert cfg["browser"]["gatherUsageStats"] is False
    assert cfg["client"]["showSidebarNavigation"] is False


def test_every_option_exists_in_this_streamlit():
    # a misspelt option (allowedHost, showErrorDetail) is silently ignored by Streamlit
    from streamlit import config

    known = set(config._config_options_template)
    for section, options in _cfg().items():
        for name in options:
            assert f"{section}.{name}" in known, (
                f"{section}.{name} is not a Streamlit {config.__name__} option"
            )


def test_room_hardening():
    from streamlit.config import ShowErrorDetailsConfigOptions

    cfg = _cfg()
    server, client, browser = cfg["server"], cfg["client"], cfg["browser"]
    # no exception type, message or traceback (absolute paths) in the page
    assert client["showErrorDetails"] == ShowErrorDetailsConfigOptions.NONE.value
    assert client["showErrorLinks"] is False
    # "viewer" hides Rerun and Clear cache (which clears every cache for every session); see
    # deploy/room_server.py
    assert client["toolbarMode"] == "viewer"
    # a websocket whose Host is not listed is refused (DNS rebinding); no wildcard
    assert {"localhost", "127.0.0.1"} <= set(server["allowedHosts"])
    assert not any("*" in h for h in server["allowedHosts"])
    assert server["enableCORS"] is True and server["enableXsrfProtection"] is True
    # bounded messages (Streamlit's defaults are 200 MB out, 25 MB in, 200 MB uploads), with room
    # for the largest the app sends (benchmarks/README.md)
    assert 2 <= server["maxMessageSize"] <= 32
    assert server["maxWidgetStateSize"] <= 2
    # no uploads: 0 MB is the least Streamlit takes (an int option; its handler answers 413 to any
    # body); nginx refuses the endpoint in a room as well (tests/test_room_security.py)
    assert server["maxUploadSize"] == 0
    from streamlit import config

    assert config._config_options_template["server.maxUploadSize"].type is int
    # set by hand, so Streamlit prints it instead of looking up the machine's external IP at
    # start-up
    assert browser["serverAddress"]
    assert server["headless"] is True


def _icon_strings(f: Path) -> list[str]:
    """The string literals in the values passed as ``icon=`` in one script (both branches of
    ``icon=a if c else b``)."""
    with f.open(encoding="utf-8") as src:
        tokens = [t for t in tokenize.generate_tokens(src.readline) if t.type != tokenize.NL]
    found = []
    for at, (name, eq) in enumerate(zip(tokens, tokens[1:], strict=False)):
        if name.string != "icon" or eq.string != "=":
            continue
        depth = 0
        for token in tokens[at + 2 :]:
            if depth == 0 and token.string in (",", ")"):
                break
            depth += token.string in ("(", "[", "{")
            depth -= token.string in (")", "]", "}")
            if token.type == tokenize.STRING:
                found.append(token.string.strip("\"'"))
    return found


def test_icons_are_streamlit_s_own_material_symbols():
    # An emoji icon is drawn by the viewer's emoji font and shows as an empty box on a machine
    # without one (this headless Chromium, many lecture-hall PCs). ":material/…:" icons come from
    # the Material Symbols font that Streamlit serves from its own static files: no font to
    # install, nothing fetched from the internet. The browser tab's icon is the exception: a
    # ":material/…:" page icon is fetched from fonts.gstatic.com, so it is a file of our own.
    import streamlit

    static = Path(streamlit.__file__).parent / "static"
    assert list(static.rglob("MaterialSymbols-Rounded*.woff2")), "Streamlit no longer ships it"
    from ui.registry import PAGES

    icons = [p.icon for p in PAGES]
    scripts = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/**/*.py")]
    for f in scripts:
        icons += _icon_strings(f)
    assert len(icons) > len(PAGES) + 20  # the alerts' and buttons' icons were found too
    assert all(re.fullmatch(r":material/[a-z0-9_]+:", i) for i in icons), icons
    from ui.frame import FAVICON

    # ui/favicon.png itself, inside the page (a file would be fetched again at every rerun)
    prefix, encoded = FAVICON.split(",")
    assert prefix == "data:image/png;base64"
    assert base64.b64decode(encoded) == (ROOT / "ui" / "favicon.png").read_bytes()
    page_icons = [re.findall(r"page_icon=(\w+)", f.read_text(encoding="utf-8")) for f in scripts]
    assert sum(page_icons, []) == ["FAVICON"]


def test_requirements_pinned_and_torch_free():
    """Every requirement pinned; the app's own never torch or transformers. The tests' may pin
    torch 2.13.0 alone, the CPU build on this disk that they check gradients and SDPA against (any
    other torch spec downloads a CUDA build); tests/test_layers.py keeps it out of the app."""
    for name in ("requirements.txt", "requirements-model.txt", "requirements-test.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                assert "==" in line, f"{name}: {line} is not pinned"
                if re.match(r"(torch|transformers)\b", line):
                    assert (name, line) == ("requirements-test.txt", "torch==2.13.0"), (
                        f"{name}: {line} must not be a requirement"
                    )
