"""Layers: no import cycle among treeplex's modules, and no import from a lower layer to a higher one.

The layers are the rows of the table under "Layers (bottom to top)" in ARCHITECTURE.md, read
here, so the page and this test cannot drift apart. Imports are read with ``ast``: module-level,
function-level and ``TYPE_CHECKING`` ones, and package ``__init__`` re-exports, the way
``import_cycles.py`` counts them (an edge to the longest imported name that is a module).
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "treeplex"


def layer_table() -> list[tuple[str, str]]:
    """(layer name, top-level module or package of treeplex) per row of ARCHITECTURE.md's table,
    bottom first."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    section = text.split("## Layers (bottom to top)", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "") or set(cells[0]) <= set("-"):
            continue
        code = re.match(r"`([\w.]+?)(?:\.py|/)`", cells[1])
        assert code, f"ARCHITECTURE.md layer row {line!r}: the package column starts with `name/` or `name.py`"
        rows.append((cells[0], code.group(1)))
    return rows


def modules() -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every module of the package (a package is its __init__)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_edges(mods: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """module -> the treeplex modules it imports anywhere in its file."""
    edges = {m: set() for m in mods}
    for mod, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".")
                    base = base[: len(base) - node.level + (1 if is_package else 0)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target not in (mod, "treeplex"):
                    edges[mod].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop(); on_stack.discard(w); component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer_of(mod: str, table: list[tuple[str, str]]) -> int:
    """The row (0 = bottom) of the top-level module or package that holds ``mod``."""
    top = mod.split(".")[1]
    for i, (_, name) in enumerate(table):
        if name == top:
            return i
    raise AssertionError(f"{mod} is in no layer of ARCHITECTURE.md's table")


def upward_imports(edges, table) -> list[str]:
    """'a (layer) -> b (layer)' for every import of a higher layer's module by a lower one."""
    return [f"{a} ({table[layer_of(a, table)][0]}) -> {b} ({table[layer_of(b, table)][0]})"
            for a in sorted(edges) if a != "treeplex" for b in sorted(edges[a])
            if layer_of(a, table) < layer_of(b, table)]


def test_the_table_names_every_top_level_module_once():
    table = layer_table()
    names = [name for _, name in table]
    assert len(names) == len(set(names)), names
    top = {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
           if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()}
    assert top == set(names), f"in the package but not the table: {sorted(top - set(names))}; " \
                              f"in the table but not the package: {sorted(set(names) - top)}"


def test_no_import_cycles():
    assert cycles(import_edges(modules())) == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    assert upward_imports(import_edges(modules()), layer_table()) == []


def test_the_checks_catch_a_cycle_and_an_upward_import():
    table = [("low", "a"), ("high", "b")]
    edges = {"treeplex.a.x": {"treeplex.b.y"}, "treeplex.b.y": {"treeplex.a.x"}, "treeplex.b.z": {"treeplex.a.x"}}
    assert cycles(edges) == [["treeplex.a.x", "treeplex.b.y"]]
    assert upward_imports(edges, table) == ["treeplex.a.x (low) -> treeplex.b.y (high)"]


def test_the_reader_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "treeplex"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from .x import f\n")
    (pkg / "a" / "x.py").write_text("def f():\n    from ..b import g\n    return g\n")
    (pkg / "b.py").write_text("import treeplex.a.x\n")
    mods = {"treeplex": pkg / "__init__.py", "treeplex.a": pkg / "a" / "__init__.py",
            "treeplex.a.x": pkg / "a" / "x.py", "treeplex.b": pkg / "b.py"}
    edges = import_edges(mods)
    assert edges["treeplex.a"] == {"treeplex.a.x"}
    assert edges["treeplex.a.x"] == {"treeplex.b"}
    assert edges["treeplex.b"] == {"treeplex.a.x"}
    assert cycles(edges) == [["treeplex.a.x", "treeplex.b"]]
