"""No test asserts a wall-clock time: a machine several times slower would fail it and block every
landing. Tests assert order and behaviour; times live in bench/ and docs/benchmarks.md."""

import ast
import re

from tests.conftest import ROOT

# Names that hold a measured time.
_TIMED = re.compile(
    r"elapsed|perf_counter|monotonic|^time$|seconds|_ms$|^ms$|latency|first_token|timings|duration|took"
)


def _names(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _bound(node: ast.AST) -> bool:
    """A number, or arithmetic on numbers (`1.5 * 1000`)."""
    return all(
        isinstance(n, ast.Constant | ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop)
        for n in ast.walk(node)
    ) and any(isinstance(n, ast.Constant) and isinstance(n.value, int | float) for n in ast.walk(node))


def timed_asserts(root=ROOT) -> list[str]:
    """Every `assert` under root/tests comparing a measured time with a fixed number, as "file:line"."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Assert):
                continue
            for cmp in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                if not any(isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in cmp.ops):
                    continue
                sides = [cmp.left, *cmp.comparators]
                timed = any(any(_TIMED.search(name) for name in _names(side)) for side in sides)
                if timed and any(_bound(side) for side in sides):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_test_asserts_a_wall_clock_time():
    assert timed_asserts() == []


def test_the_scan_finds_a_timed_assert_and_not_an_order(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "def test_fast(t):\n    elapsed = t()\n    assert elapsed <= 1000\n"
        "    assert t.timings.total >= t.timings.first_token\n    assert t.latency < 1.5 * 2\n"
    )
    assert timed_asserts(tmp_path) == ["tests/test_x.py:3", "tests/test_x.py:5"]
