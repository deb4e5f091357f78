"""The layers point one way: ui/ and eval/ use rag/; rag/ imports neither."""

import ast

from tests.conftest import ROOT


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


def test_rag_imports_nothing_from_ui_or_eval():
    bad = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "rag").rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] in ("ui", "eval", "bench", "tests")
    ]
    assert not bad, bad


def test_chat_and_eval_commands_are_registered_from_their_packages():
    from rag.cli import app

    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    assert {"ingest", "search", "ask", "verify", "chat", "eval"} <= names
    owners = {c.name or c.callback.__name__: c.callback.__module__ for c in app.registered_commands}
    assert owners["chat"] == "ui.cli" and owners["eval"] == "eval.cli"


def _module(path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imported_modules(path, modules: set[str]):
    """Like `_imports`, but "from rag.index import keyword" names the module rag.index.keyword."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield full if full in modules else node.module


def _graph() -> dict[str, set[str]]:
    """rag module -> the rag modules it imports (at run time and for type checking alike)."""
    paths = sorted((ROOT / "rag").rglob("*.py"))
    modules = {_module(p) for p in paths}
    graph = {}
    for path in paths:
        wanted = set()
        for name in _imported_modules(path, modules):
            # "from rag.index import keyword" names the module rag.index.keyword
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != _module(path) and name != "rag":
                wanted.add(name)
        graph[_module(path)] = wanted
    return graph


def test_the_folders_follow_the_data_one_way():
    # papers flow into the index; a question flows through search into an answer
    order = {"rag.index": 0, "rag.search": 1, "rag.answer": 2}
    bad = [
        f"{a} -> {b}"
        for a, targets in _graph().items()
        for b in targets
        for fa, ra in order.items()
        for fb, rb in order.items()
        if a.startswith(fa) and b.startswith(fb) and rb > ra
    ]
    assert not bad, bad


def test_no_import_circle_in_rag():
    graph = _graph()
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in seen and (found := visit(nxt, [*path, node])):
                return found
        seen[node] = 2
        return None

    for start in sorted(graph):
        if start not in seen:
            circle = visit(start, [])
            assert circle is None, " -> ".join(circle)
