"""Names that mean one thing (issue 52; the glossary in CONTRIBUTING.md): no module of the project
is imported under the name of another of its modules (``from ui import controls as widgets``
beside a real ``ui/widgets.py`` read as the other module), and the names the glossary settles are
not used for something else."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("visattn", "ui")
SOURCES = sorted(
    [ROOT / "app.py"]
    + [
        p
        for pkg in (*PACKAGES, "pages", "tests", "benchmarks", "deploy")
        for p in (ROOT / pkg).rglob("*.py")
    ]
)


def module_names() -> dict[str, set[str]]:
    """{a module's last name: its dotted paths} over the project's packages."""
    names: dict[str, set[str]] = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if path.name == "__init__.py":
                dotted = dotted.removesuffix(".__init__")
            names.setdefault(dotted.rsplit(".", 1)[-1], set()).add(dotted)
    return names


def is_module(dotted: str) -> bool:
    path = ROOT / Path(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def package_of(source: Path) -> str:
    return ".".join(source.relative_to(ROOT).parent.parts)


def imported_modules(source: Path):
    """(line, the module's dotted path, the name it is bound to) for each project module imported
    under a name of its own (``import a.b as c``, ``from a import b as c``)."""
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and is_module(alias.name):
                    yield node.lineno, alias.name, alias.asname
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the source's own package up
                parts = package_of(source).split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                dotted = f"{base}.{alias.name}" if base else alias.name
                if alias.asname and is_module(dotted):
                    yield node.lineno, dotted, alias.asname


def test_the_scan_finds_the_projects_modules():
    names = module_names()
    assert {"widgets", "controls", "tour", "live", "modern_attention"} <= set(names)
    found = [hit for source in SOURCES for hit in imported_modules(source)]
    assert len(found) > 20, "the scan found almost no aliased import: it is broken"


def test_no_module_is_imported_under_another_modules_name():
    names = module_names()
    bad = [
        f"{source.relative_to(ROOT)}:{line} imports {dotted} as {alias}, the name of "
        f"{sorted(names[alias] - {dotted})}"
        for source in SOURCES
        for line, dotted, alias in imported_modules(source)
        if alias in names and dotted not in names[alias]
    ]
    assert not bad, bad


def test_one_step_class():
    """A tour's step is ``visattn.tour.Step``; what a figure shows at one position of its slider is
    a ``visattn.figures.live.SliderStep``: no other class is called Step."""
    steps = [
        f"{source.relative_to(ROOT)}:{node.lineno}"
        for source in SOURCES
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and node.name == "Step"
    ]
    assert steps == ["visattn/tour.py:" + steps[0].rsplit(":", 1)[1]] if steps else False, steps


# What a link reproduces (``visattn.tour.view_query``, "Add this view"), and the speaker view, the
# name its users read ("Speaker view"); NumPy's ``array.view(dtype)`` is a call, not a name.
VIEW_NAMES = {"view_query", "add_view", "on_view", "on_view_change", "speaker_view"}


def test_view_is_what_a_link_reproduces():
    """In the app's code a view is what a link reproduces: a reading of the attention, a part of
    the single-head page, a section or the shown tokens is named for what it is."""
    bad = []
    for source in SOURCES:
        if source.parts[len(ROOT.parts)] not in ("app.py", *PACKAGES, "pages"):
            continue
        tree = ast.parse(source.read_text(encoding="utf-8"))
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) in called:
                continue  # a method: array.view(np.float32)
            name = getattr(node, "id", None) or getattr(node, "arg", None)
            name = name or getattr(node, "attr", None) or getattr(node, "name", None)
            if isinstance(name, str) and "view" in name.lower() and name not in VIEW_NAMES:
                bad.append(f"{source.relative_to(ROOT)}:{getattr(node, 'lineno', '?')} {name}")
    assert not bad, bad
