"""Survey answers keep attribution: every shown sentence that names a paper the answer listed or
read (by its title, or the short name its title gives) cites that paper.

    python -m eval.attribution --out docs/data/attribution-surveys.jsonl [GOLD ...]

Asks each survey question of the gold files (default: the dev survey sets and the outside ones)
with the settings' pipeline and index, and writes one line per question as it goes (resumes): its
id, how many sentences the synthesis shows, and per sentence the papers it names and the papers it
cites (ids only: no text of the abstracts or the answers). `summary` counts the sentences that name
a paper they do not cite."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from eval.gold import normalized
from rag.answer.trust.answers import names_paper, paper_names
from rag.types import Answer

ROOT = Path(__file__).resolve().parents[1]
GOLD = (
    ROOT.parent / "shared/data/outside/survey-a.jsonl",
    ROOT.parent / "shared/data/outside/survey-b.jsonl",
    ROOT / "eval/gold/conference/survey-dev-a.jsonl",
    ROOT / "eval/gold/conference/survey-dev-b.jsonl",
)


def attribution(answer: Answer) -> list[dict]:
    """Per shown sentence with a claim: the papers it names (of those listed or offered), the
    papers it cites."""
    papers = {h.paper.id: h.paper for h in answer.papers} | {r.paper.id: r.paper for r in answer.retrieved}
    short = paper_names(list(papers.values()))
    by_number = {c.number: c.paper_id for c in answer.citations}
    out = []
    for s in answer.sentences:
        if not s.claim:
            continue
        named = sorted(pid for pid, p in papers.items() if names_paper(p, short[pid], s.text))
        out.append({"names": named, "cites": sorted({by_number[n] for n in s.citations if n in by_number})})
    return out


def questions(paths: Sequence[Path]) -> list[tuple[str, str]]:
    rows = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = normalized(json.loads(line))
                rows.append((f"{Path(path).parent.name}/{Path(path).stem}:{row['id']}", row["question"]))
    return rows


def run(paths: Sequence[Path], out: Path) -> None:
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings

    done = {json.loads(line)["id"] for line in out.read_text().splitlines()} if out.exists() else set()
    pipeline = Pipeline(Settings())
    for qid, question in questions(paths):
        if qid in done:
            continue
        answer = pipeline.ask(question)
        row = {"id": qid, "listed": len(answer.papers), "shown": len(answer.sentences),
               "sentences": attribution(answer), "seconds": round(answer.timings.total, 1)}  # fmt: skip
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(qid, row["shown"], flush=True)


def summary(out: Path) -> dict:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    sentences = [s for r in rows for s in r["sentences"]]
    naming = [s for s in sentences if s["names"]]
    return {
        "questions": len(rows),
        "with_synthesis": sum(1 for r in rows if r["sentences"]),
        "sentences": len(sentences),
        "naming_a_paper": len(naming),
        "naming_a_paper_they_do_not_cite": sum(1 for s in naming if not set(s["names"]) <= set(s["cites"])),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gold", nargs="*", type=Path, default=list(GOLD))
    ap.add_argument("--out", type=Path, default=ROOT / "docs/data/attribution-surveys.jsonl")
    ap.add_argument("--report", action="store_true", help="only summarise what --out holds")
    args = ap.parse_args(argv)
    if not args.report:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        run(args.gold, args.out)
    print(json.dumps(summary(args.out), indent=1))


if __name__ == "__main__":
    main()
