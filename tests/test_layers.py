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
