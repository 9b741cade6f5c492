"""gemvlab's import graph, read from the source (imports inside functions included), and its layers.

    python tools/import_graph.py        # each module with what it imports; exits 1 on a cycle

tests/test_layout.py holds the package to it: no cycle, and gemvlab.api the one module that imports
both the stage path (gemvlab.stages) and the dispatcher (gemvlab.dispatch).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gemvlab"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str, known: dict) -> str | None:
    """The gemvlab module an imported name lives in: itself, or the package that holds it."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def graph() -> dict[str, set[str]]:
    """module -> the gemvlab modules it imports, at the top or inside functions."""
    known = modules()
    out = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    root = ".".join(base + ([node.module] if node.module else []))
                else:
                    root = node.module or ""
                # `from package import module` depends on the module; `from package import name`
                # on the package that holds the name
                targets = [f"{root}.{a.name}" if f"{root}.{a.name}" in known else root for a in node.names]
            for t in targets:
                found = _resolve(t, known) if t.startswith("gemvlab") else None
                if found and found != name:
                    deps.add(found)
        out[name] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first walk (each reported once, from where it was entered)."""
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(g[m]):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    return found


def layers(g: dict[str, set[str]]) -> list[list[str]]:
    """Modules by layer: each imports only modules of lower layers (a package's __init__ counts as
    importing what it re-exports)."""
    depth: dict[str, int] = {}

    def d(m, seen=()):
        if m not in depth:
            depth[m] = 1 + max((d(x, seen + (m,)) for x in g[m] if x not in seen), default=-1)
        return depth[m]

    for m in g:
        d(m)
    return [sorted(m for m in g if depth[m] == i) for i in range(max(depth.values()) + 1)]


def main() -> int:
    g = graph()
    for i, layer in enumerate(layers(g)):
        print(f"layer {i}:")
        for m in layer:
            print(f"  {m:<36} <- {', '.join(sorted(x.removeprefix('gemvlab.') for x in g[m])) or '-'}")
    found = cycles(g)
    print(f"{len(g)} modules, {sum(map(len, g.values()))} imports, {len(found)} cycles")
    for c in found:
        print("  cycle: " + " -> ".join(c))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
