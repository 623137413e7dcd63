"""Every public function of visattn (a module-level ``def`` whose name does not start with ``_``) is
fully annotated: each parameter (``*args`` and ``**kwargs`` too) and the return value, so a
notebook user's editor shows every type."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "visattn"


def _missing(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    params = [
        *a.posonlyargs,
        *a.args,
        *a.kwonlyargs,
        *(p for p in (a.vararg, a.kwarg) if p is not None),
    ]
    out = [p.arg for p in params if p.annotation is None]
    return out + (["return"] if fn.returns is None else [])


def unannotated() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
            if isinstance(
                node, ast.FunctionDef | ast.AsyncFunctionDef
            ) and not node.name.startswith("_"):
                if missing := _missing(node):
                    found.append(f"visattn/{rel}:{node.lineno} {node.name}: {', '.join(missing)}")
    return found


def test_walk_finds_the_package():
    assert (PACKAGE / "attention.py").is_file()


def test_public_functions_are_annotated():
    missing = unannotated()
    assert not missing, (
        f"{len(missing)} public function(s) without full annotations:\n" + "\n".join(missing)
    )


def test_the_check_catches_a_gap():
    code = (
        "def f(x, y: int = 0) -> int:\n    return y\n\n"
        "def g(*a: int, **k):\n    pass\n\n"
        "def _h(x):\n    pass\n"
    )
    body = ast.parse(code).body
    assert [_missing(fn) for fn in body] == [["x"], ["k", "return"], ["x", "return"]]
