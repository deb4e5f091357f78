"""The JSONL a fetch writes, and its state beside it (`<file>.fetch.json`: what is fetched, the next
page, how many there are). Each page's records are written and flushed to disk before the state
moves on, so a fetch killed at any point resumes at the first page not fully written; a record
already in the file (a page written just before the kill) is not written twice, and a line cut
short by the kill is dropped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rag.fetch.http import FetchError


class Output:
    def __init__(self, path: Path, query: dict[str, Any]):
        self.path = Path(path)
        self.state_path = self.path.with_name(self.path.name + ".fetch.json")
        self.query = query
        state = json.loads(self.state_path.read_text()) if self.state_path.exists() else None
        if state is not None and state.get("query") != query:
            raise FetchError(f"{self.path} holds another fetch ({state.get('query')}); choose another --out")
        if state is None and self.path.exists() and self.path.stat().st_size:
            raise FetchError(f"{self.path} exists and no fetch wrote it; choose another --out or remove it")
        self.next: int = int(state["next"]) if state else 0
        self.total: int | None = state.get("total") if state else None
        self.complete: bool = bool(state and state.get("complete"))
        self.seen = self._repair()

    def _repair(self) -> set[str]:
        """The ids already written; a last line cut short by a kill is removed."""
        if not self.path.exists():
            return set()
        data = self.path.read_bytes()
        keep = data[: data.rfind(b"\n") + 1]
        if len(keep) != len(data):
            self.path.write_bytes(keep)
        return {json.loads(line)["id"] for line in keep.decode("utf-8").splitlines() if line.strip()}

    def add(self, records: list[dict[str, Any]], next_offset: int, total: int | None) -> int:
        """Write the records not written yet, then move the state to `next_offset`."""
        new = [r for r in records if r["id"] not in self.seen]
        with open(self.path, "a", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in new)
            f.flush()
            os.fsync(f.fileno())
        self.seen |= {r["id"] for r in new}
        self.next, self.total = next_offset, total
        self._save(complete=False)
        return len(new)

    def finish(self) -> None:
        self.complete = True
        self._save(complete=True)

    def _save(self, complete: bool) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps({"query": self.query, "next": self.next, "total": self.total, "complete": complete})
        )
        os.replace(tmp, self.state_path)
