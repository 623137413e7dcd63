"""Names that mean one thing (the glossary in CONTRIBUTING.md): no module of the project
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
VIEW_NAMES |= {"memoryview"}  # Python's own


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


# --- one name per page: every module of a page has the page's id as its stem ---------------------
# Locale namespaces that belong to no page: the words every page shares, the bad-input messages,
# the lecture's, the model picker's, the room's.
SHARED_NAMESPACES = {"common", "errors", "lecture", "models", "room"}
# Where a page's modules live, each file named <page id>.py (or shared by several pages)
PER_PAGE = ("visattn/figures", "ui/cache")


def page_ids() -> set[str]:
    from ui.registry import PAGES

    return {p.id for p in PAGES}


def stems(folder: str, pattern: str = "*.py") -> set[str]:
    return {p.stem for p in (ROOT / folder).glob(pattern) if p.stem != "__init__"}


def page_imports() -> dict[str, set[str]]:
    """{dotted module: the ids of the pages whose script imports it}."""
    from ui.registry import PAGES

    out: dict[str, set[str]] = {}
    for page in PAGES:
        source = ROOT / page.path
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    dotted = f"{node.module}.{alias.name}"
                    dotted = dotted if is_module(dotted) else node.module
                    out.setdefault(dotted, set()).add(page.id)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    out.setdefault(alias.name, set()).add(page.id)
    return out


def test_every_page_has_its_script_lesson_words_and_tests_under_its_id():
    from ui.registry import PAGES

    for page in PAGES:
        assert (ROOT / page.path).is_file(), page
        assert page.path == "app.py" or page.path == f"pages/{page.id}.py", page
        assert page.url_path in ("", page.id), page
        for lang in ("en", "zh"):
            assert (ROOT / "ui" / "locales" / lang / f"{page.id}.json").is_file(), (page, lang)
        assert (ROOT / "tests" / f"test_page_{page.id}.py").is_file(), page
        if page.lesson:
            assert page.lesson == f"visattn.lessons.{page.id}" and is_module(page.lesson), page
    assert stems("pages") == page_ids() - {"home"}, "a script in pages/ that is no page"


def test_lessons_holds_the_lessons_only():
    """visattn/lessons/ is one module per page; what pages share lives where its concern does."""
    lessons = {
        p.lesson.rsplit(".", 1)[1] for p in __import__("ui.registry").registry.PAGES if p.lesson
    }
    assert stems("visattn/lessons") == lessons


def test_a_lesson_imports_no_other_lesson():
    bad = [
        f"{source.relative_to(ROOT)}:{line} imports {dotted}"
        for source in sorted((ROOT / "visattn" / "lessons").glob("*.py"))
        for line, dotted in lesson_imports(source)
    ]
    assert not bad, bad


def lesson_imports(source: Path):
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1:
                base = f"visattn.lessons.{base}" if base else "visattn.lessons"
            for alias in node.names:
                dotted = f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}") else base
                if dotted.startswith("visattn.lessons.") and dotted != "visattn.lessons.__init__":
                    yield node.lineno, dotted
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("visattn.lessons."):
                    yield node.lineno, alias.name


def test_a_module_one_page_uses_is_named_for_that_page():
    """In the per-page packages (figures, caches) a module only one page imports has that page's
    id as its stem, and a module named for a page is one that page imports."""
    ids = page_ids()
    used = page_imports()
    checked = 0
    for folder in PER_PAGE:
        package = folder.replace("/", ".")
        for stem in sorted(stems(folder)):
            users = used.get(f"{package}.{stem}", set())
            if stem in page_ids():
                assert stem in users, f"{folder}/{stem}.py is not used by its page"
            if len(users) == 1 and stem not in ids:
                raise AssertionError(f"{folder}/{stem}.py serves only {users}: name it so")
            checked += 1
    assert checked > 10, "the scan found almost no module: it is broken"


def test_every_locale_namespace_is_a_page_a_figure_module_or_shared():
    ids = page_ids()
    figures = stems("visattn/figures")
    for lang in ("en", "zh"):
        for ns in stems(f"ui/locales/{lang}", "*.json"):
            ok = ns in ids or ns in SHARED_NAMESPACES
            ok = ok or (ns.startswith("figures_") and ns.removeprefix("figures_") in figures)
            assert ok, f"ui/locales/{lang}/{ns}.json names no page, figure module or shared words"


def test_no_file_keeps_a_former_page_id():
    """The former ids live on only in the tour's table that reads old links."""
    from visattn.tour import FORMER_PAGE_IDS

    names = {
        f"{pre}{old}"
        for old in FORMER_PAGE_IDS
        for pre in ("", "test_", "test_page_", "cache_", "figures_")
    }
    found = [
        str(p.relative_to(ROOT))
        for top in ("app.py", "pages", "ui", "visattn", "tests")
        for p in (ROOT / top).rglob("*")
        if p.suffix in (".py", ".json") and p.stem in names
    ]
    assert not found, found
