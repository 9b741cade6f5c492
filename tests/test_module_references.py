"""Every `module.name` that gemvlab's code, or a notebook's source, reads from one of gemvlab's
modules exists.

Paths that run only on a GPU (a notebook helper's live branch, say) never run in CI; a name
misspelt there would surface only in front of a learner with a GPU. This reads the source
instead of running it, so it checks those paths too."""

import ast
import importlib
from pathlib import Path

import gemvlab

PACKAGE = Path(gemvlab.__file__).parent


def own_module_aliases(tree: ast.Module) -> dict[str, str]:
    """alias -> gemvlab module, from `from . import x [as y]`, `from gemvlab import x [as y]` and
    `import gemvlab [as lab]`."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name for a in node.names if a.name.startswith("gemvlab")})
        if isinstance(node, ast.ImportFrom) and (node.level == 1 and not node.module or node.module == "gemvlab"):
            for a in node.names:
                if (PACKAGE / f"{a.name}.py").exists():
                    aliases[a.asname or a.name] = f"gemvlab.{a.name}"
    return aliases


def test_attributes_of_own_modules_exist():
    missing = []
    notebooks = sorted((PACKAGE.parent / "notebooks").glob("*.py"))
    for path in sorted(PACKAGE.glob("*.py")) + notebooks:
        tree = ast.parse(path.read_text())
        aliases = own_module_aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                module = importlib.import_module(aliases[node.value.id])
                if not hasattr(module, node.attr):
                    missing.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not missing, "names that do not exist:\n" + "\n".join(missing)
