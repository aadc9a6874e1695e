"""The plugin SDK is the whole surface of the built-ins, and hausbox has no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import hausbox.sdk

PACKAGE = Path(hausbox.sdk.__file__).resolve().parents[1]
BUILTINS = ("integrations/builtin", "recipes/builtin")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """Modules imported when ``path`` is imported: module level, not under ``if TYPE_CHECKING``."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If) and not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                visit(node.body + node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body + node.orelse + node.finalbody)

    visit(ast.parse(path.read_text()).body)
    return found


def test_sdk_exports_exactly_what_it_names():
    assert hausbox.sdk.__all__ and len(set(hausbox.sdk.__all__)) == len(hausbox.sdk.__all__)
    for name in hausbox.sdk.__all__:
        assert hasattr(hausbox.sdk, name), name
        assert not name.startswith("_")


def test_built_ins_import_only_the_sdk():
    wrong: list[tuple[str, str]] = []
    for folder in BUILTINS:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            # its own plugin package: hausbox.integrations.builtin.<id>; the built-in recipes are
            # still one package (motion-light-dimmable builds on motion-light) until each gets a folder
            own = module_name(path).split(".")[: 4 if folder.startswith("integrations") else 3]
            for name in top_level_imports(path):
                if name.startswith("hausbox") and not (name == "hausbox.sdk" or name.startswith("hausbox.sdk.") or name.split(".")[: len(own)] == own):
                    wrong.append((str(path.relative_to(PACKAGE)), name))
    assert sorted(set(wrong)) == []


def test_no_import_cycle_in_hausbox():
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: {m for m in top_level_imports(path) if m in modules and m != name} for name, path in modules.items()}
    cycles, done, stack = [], set(), []

    def visit(name: str) -> None:
        if name in stack:
            cycles.append(stack[stack.index(name):] + [name])
            return
        if name in done:
            return
        stack.append(name)
        for target in sorted(graph[name]):
            visit(target)
        stack.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)
    assert cycles == []


def test_a_manifest_is_checked_with_clear_errors():
    import pytest

    from hausbox.sdk import ManifestError, check_manifest

    good = {"id": "my-plugin", "name": "Mine", "version": "1.2.3", "description": "d", "icon": "x"}
    assert check_manifest(good)["type"] == "integration"  # the spec's default
    for broken, message in (
        ({**good, "version": "1.2"}, "semver"),
        ({**good, "type": "theme"}, "type must be one of integration, recipe"),
        ({k: v for k, v in good.items() if k != "icon"}, "icon is required"),
        ({**good, "id": "Bad Id"}, "id must be"),
        ({**good, "apiVersion": "2"}, "apiVersion"),
        ([], "not a JSON object"),
    ):
        with pytest.raises(ManifestError, match=message):
            check_manifest(broken)
