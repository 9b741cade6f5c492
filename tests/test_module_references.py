"""Every `module.name` that gemvlab's code, or a notebook's source, reads from one of gemvlab's
modules exists.

Paths that run only on a GPU (a notebook helper's live branch, say) never run in CI; a name
misspelt there would surface only in front of a learner with a GPU. This reads the source
instead of running it, so it checks those paths too."""

import ast
import importlib
import importlib.util
from pathlib import Path

import gemvlab

PACKAGE = Path(gemvlab.__file__).parent


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def own_module_aliases(tree: ast.Module, path: Path) -> dict[str, str]:
    """alias -> gemvlab module, from `from .x import y [as z]` (y a module), `from gemvlab... import y`
    and `import gemvlab[.x] [as lab]`."""
    here = module_of(path) if path.is_relative_to(PACKAGE) else ""
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name for a in node.names if a.name.startswith("gemvlab")})
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                root = ".".join(base + ([node.module] if node.module else []))
            else:
                root = node.module or ""
            if not root.startswith("gemvlab"):
                continue
            for a in node.names:
                name = f"{root}.{a.name}"
                if importlib.util.find_spec(name.split(".")[0]) and _is_module(name):
                    aliases[a.asname or a.name] = name
    return aliases


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_attributes_of_own_modules_exist():
    missing = []
    notebooks = sorted((PACKAGE.parent / "notebooks").glob("*.py"))
    for path in sorted(PACKAGE.rglob("*.py")) + notebooks:
        tree = ast.parse(path.read_text())
        aliases = own_module_aliases(tree, path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                module = importlib.import_module(aliases[node.value.id])
                if not hasattr(module, node.attr):
                    missing.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not missing, "names that do not exist:\n" + "\n".join(missing)
