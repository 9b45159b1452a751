"""The import picture: record -> trace -> analyze, no arrow against the flow, no cycles.

Layers, bottom to top:

* the trace core: ``padiff_trace`` and its top-level modules (format, reader, writer,
  matching knowledge) — imports neither side;
* ``padiff_trace.recorder`` and ``padiff_trace.analyzer`` — never import each other, and
  use the core only through its public modules (``padiff_trace``, ``padiff_trace.matching``,
  ``padiff_trace.arrays``, ``padiff_trace.options``);
* ``padiff_trace.pipeline`` (record A, record B, compare) and ``padiff_trace.cli`` on top.

Every ``import`` statement counts, including those inside functions (a cycle broken by a
function-local import is still a cycle). Imports under ``if TYPE_CHECKING:`` are
annotations, never executed: they do not count for the layers, but they do for cycles and
for the order of the analyzer's folders (each test runs a second time with them).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# package -> folder (recorder/ and analyzer/ live at the repository root, mapped by pyproject)
FOLDERS = {"padiff_trace": ROOT / "padiff_trace", "padiff_trace.recorder": ROOT / "recorder", "padiff_trace.analyzer": ROOT / "analyzer"}
SIDES = ("padiff_trace.recorder", "padiff_trace.analyzer")
TOP = ("padiff_trace.pipeline", "padiff_trace.cli", "padiff_trace.__main__")
PUBLIC_PACKAGES = ("padiff_trace", "padiff_trace.matching", "padiff_trace.arrays", "padiff_trace.options", "padiff_trace.recorder",
                   "padiff_trace.analyzer")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg, folder in FOLDERS.items():
        for f in folder.rglob("*.py"):
            rel = f.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            if any(name.startswith(o + ".") for o in FOLDERS if o != pkg and o.startswith(pkg + ".")):
                continue
            out[name] = f
    return out


def _runtime_nodes(tree: ast.AST, annotations: bool = False) -> Iterator[ast.AST]:
    """Every node, except those under ``if TYPE_CHECKING:`` (annotations only, never run)
    unless ``annotations``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not annotations and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _imports(name: str, path: Path, annotations: bool = False) -> Iterator[str]:
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8")), annotations):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - node.level + 1]
                mod = ".".join(parent + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod
            yield from (f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`


def _graph(annotations: bool = False) -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        graph[name] = {m for m in _imports(name, path, annotations) if m in mods and m != name}
    return graph


def _layer(mod: str) -> str:
    for top in (*TOP, *SIDES):
        if mod == top or mod.startswith(top + "."):
            return top
    return "core"


def _private_of_other_layer(src: str, dst: str) -> bool:
    return _layer(dst) != _layer(src) and any(p.startswith("_") for p in dst.split(".")[1:])


def test_the_graph_covers_every_package() -> None:
    g = _graph()
    for must in ("padiff_trace.trace._reader", "padiff_trace.recorder._session", "padiff_trace.analyzer._compare", "padiff_trace.cli"):
        assert must in g
    assert any("padiff_trace.analyzer" in deps for deps in g.values())  # edges are found at all


def test_no_arrow_against_the_flow() -> None:
    bad = []
    for src, deps in _graph().items():
        for dst in deps:
            ls, ld = _layer(src), _layer(dst)
            if src == "padiff_trace" and ld == "padiff_trace.pipeline":
                continue  # the package's front door lends `auto_diff` from the top layer, lazily (module __getattr__)
            if ls == "core" and ld != "core":
                bad.append(f"trace core {src} imports {dst}")
            elif ls in SIDES and ld in SIDES and ls != ld:
                bad.append(f"{src} imports the other side's {dst}")
            elif ls in SIDES and ld in TOP:
                bad.append(f"{src} imports the layer above, {dst}")
            elif _private_of_other_layer(src, dst):
                bad.append(f"{src} reaches into the private module {dst}")
    assert not bad, "\n".join(sorted(bad))


def test_no_private_attribute_reach_ins() -> None:
    """The analyzer and the CLI read traces through Trace's public API."""
    names = ("_read_stored", "_shard_of", "_shard_paths", "_data_columns", "_rows")
    bad = []
    for mod, path in _modules().items():
        if _layer(mod) == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            own = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
            if isinstance(node, ast.Attribute) and node.attr in names and not own:
                bad.append(f"{mod}:{node.lineno} .{node.attr}")
    assert not bad, bad


@pytest.mark.parametrize("annotations", [False, True], ids=["run-time", "with-annotations"])
def test_no_import_cycles(annotations: bool) -> None:
    """No circle of modules, counting function-local imports and, in the second run, imports
    made for type annotations only: two modules that need each other, even just to name each
    other's types, are one concept split across two files."""
    g = _graph(annotations)
    # a module imports its own package's __init__ implicitly; only explicit edges count
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for d in sorted(g.get(n, ())):
            if d in n.split(".") or n.startswith(d + "."):
                continue  # a module importing its parent package
            if state.get(d) == 1:
                cycles.append([*path[path.index(d) :], d] if d in path else [n, d])
            elif d not in state:
                visit(d, [*path, d])
        state[n] = 2

    for n in sorted(g):
        if n not in state:
            visit(n, [n])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


# the analyzer's folders in the order a comparison runs through them; its top-level modules
# (the package's front door, ``_compare``) come after all three
ANALYZER_FLOW = ("alignment", "judging", "reporting")


def _analyzer_rank(mod: str) -> int | None:
    parts = mod.split(".")
    if parts[:2] != ["padiff_trace", "analyzer"]:
        return None
    return ANALYZER_FLOW.index(parts[2]) if len(parts) > 2 and parts[2] in ANALYZER_FLOW else len(ANALYZER_FLOW)


@pytest.mark.parametrize("annotations", [False, True], ids=["run-time", "with-annotations"])
def test_analyzer_folders_follow_the_flow(annotations: bool) -> None:
    """alignment -> judging -> reporting: a folder of the analyzer imports only the folders
    before it, never ``_compare`` or the package's front door above them."""
    bad = []
    for src, deps in _graph(annotations).items():
        rs = _analyzer_rank(src)
        if rs is None or rs == len(ANALYZER_FLOW):
            continue
        for dst in deps:
            rd = _analyzer_rank(dst)
            if rd is not None and rd > rs:
                bad.append(f"{src} imports {dst}, later in the flow")
    assert not bad, "\n".join(sorted(bad))


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_all_is_the_contract(package: str) -> None:
    """Every exported name exists and is documented; nothing private is exported."""
    mod = importlib.import_module(package)
    exported = mod.__all__
    assert len(exported) == len(set(exported)), "duplicate names in __all__"
    for name in exported:
        assert hasattr(mod, name), f"{package}.__all__ names {name}, which does not exist"
        assert not name.startswith("_") or name == "__version__", f"{package} exports private {name}"
        obj = getattr(mod, name)
        if callable(obj) and getattr(obj, "__module__", "").startswith("padiff_trace"):
            assert obj.__doc__, f"{package}.{name} has no docstring"
