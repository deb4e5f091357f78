"""How many hand-written rules the product holds: `python -m bench.rules`.

Counted in `rag/` (not Settings, whose fields are documented and set by the user):
  regexes      `re.compile(...)` calls and module constants used as patterns
  word lists   module-level tuples, lists, sets or dicts of three or more string literals
  numbers      module-level UPPER_CASE constants that are plain numbers (hand-set thresholds)

A change that adds a rule should earn it on both dev halves; the counts are reported in
docs/architecture.md before and after each change, and the count should go down.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

RAG = Path(__file__).resolve().parents[1] / "rag"


def _is_word_list(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set", "tuple"):
        return bool(node.args) and _is_word_list(node.args[0])
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = node.elts
    elif isinstance(node, ast.Dict):
        items = [k for k in node.keys if k is not None]
    else:
        return False
    strings = [e for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return len(strings) >= 3 and len(strings) == len(items)


def count(path: Path) -> dict[str, int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    regexes = sum(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "compile"
        and getattr(n.func.value, "id", "") == "re"
        for n in ast.walk(tree)
    )
    lists = numbers = 0
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if not names:
            continue
        if _is_word_list(stmt.value):
            lists += 1
        elif (
            isinstance(stmt.value, ast.Constant)
            and type(stmt.value.value) in (int, float)
            and all(n.lstrip("_").isupper() for n in names)
        ):
            numbers += 1
    return {"regexes": regexes, "word lists": lists, "numbers": numbers}


def main() -> int:
    total = {"regexes": 0, "word lists": 0, "numbers": 0}
    rows = []
    for path in sorted(RAG.rglob("*.py")):
        if path.name == "settings.py":
            continue
        c = count(path)
        if any(c.values()):
            rows.append((str(path.relative_to(RAG.parent)), c))
        for k, v in c.items():
            total[k] += v
    for name, c in rows:
        print(f"{name:42} " + "  ".join(f"{k} {v}" for k, v in c.items()))
    print(f"{'total':42} " + "  ".join(f"{k} {v}" for k, v in total.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
