"""The conference as the judges' data reads it: papers by id, their sentences by index, and which
papers may be trained on.

Training data never holds a sealed test's papers: only a paper whose id's sha1 hex digest ends in an
even digit may be trained on, and sealed tests are drawn from the others. Data files name abstract
sentences by (paper id, index) and store only what was written for them; the text is read from the
conference file at build time, never committed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from rag.text import sentences

ROOT = Path(__file__).resolve().parents[2]
CONFERENCE = ROOT.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.jsonl.gz"
EVAL = ROOT / "eval"
DATA = Path(__file__).parent / "data"


def trainable(paper_id: str) -> bool:
    """May this paper be trained on? (its id's sha1 ends in an even hex digit)"""
    return hashlib.sha1(paper_id.encode()).hexdigest()[-1] in "02468ace"


@lru_cache(maxsize=1)
def conference(path: Path = CONFERENCE) -> dict[str, dict]:
    """Every paper of the conference file by id (title, abstract, status, ...)."""
    if not path.exists():
        raise FileNotFoundError(
            f"the conference file is not at {path} (see ../shared/data/iclr2025/README.md)"
        )
    with gzip.open(path, "rt") as f:
        rows = [json.loads(line) for line in f]
    return {r["id"]: r for r in rows if r.get("abstract")}


def abstract_sentences(paper_id: str) -> list[str]:
    """The paper's abstract split by `rag.text.sentences` (the indexes data files name)."""
    return sentences(conference()[paper_id]["abstract"])


def used_papers(skip: tuple[Path, ...] = ()) -> set[str]:
    """Ids of papers any committed gold, claim or judge-data file names (so a new sealed set or
    training draw can avoid them). `skip`: files not to count (the one being rebuilt)."""
    ids = set(conference())
    used: set[str] = set()
    for path in EVAL.rglob("*.jsonl"):
        if path in skip or DATA in path.parents:  # the judges' own data may reuse trainable papers
            continue
        used |= {token for token in re.findall(r"[A-Za-z0-9_-]{10}", path.read_text()) if token in ids}
    return used
