"""The package's shape, held: no import cycle (imports inside functions included), gemvlab.api the
one module that imports both the stage path and the dispatcher, no module over 400 lines, and no
function over 60 lines except those listed here with the reason splitting them would hurt."""

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
#: Functions allowed to be longer, and why splitting them would hurt.
LONG_FUNCTIONS = {
    "gemvlab.pitfalls.child.child": "one branch per demo, each a short script read top to bottom as its transcript",
}


def test_no_import_cycles():
    g = import_graph.graph()
    assert not import_graph.cycles(g)


def test_only_the_api_imports_both_the_stages_and_the_dispatcher():
    g = import_graph.graph()

    def reaches(module, prefix):
        seen, todo = set(), [module]
        while todo:
            m = todo.pop()
            for d in g[m]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return any(s == prefix or s.startswith(prefix + ".") for s in seen)

    for m in g:
        if m.startswith("gemvlab.stages"):
            assert not reaches(m, "gemvlab.dispatch"), m
        if m.startswith("gemvlab.dispatch"):
            assert not reaches(m, "gemvlab.stages"), m
    importers = {m for m in g if {d.split(".")[1] for d in g[m] if d.count(".")} >= {"stages", "dispatch"}}
    assert "gemvlab.api" in importers
    assert not importers & {m for m in g if m.startswith(("gemvlab.stages", "gemvlab.dispatch"))}


def test_no_module_is_over_400_lines():
    long = {m: n for m, p in import_graph.modules().items() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long


def test_long_functions_are_the_listed_ones():
    found = set()
    for name, path in import_graph.modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES):
                found.add(f"{name}.{node.name}")
    assert found <= set(LONG_FUNCTIONS), sorted(found - set(LONG_FUNCTIONS))
    assert set(LONG_FUNCTIONS) <= found, "listed but no longer long: " + str(sorted(set(LONG_FUNCTIONS) - found))
