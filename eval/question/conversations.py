"""Written conversations (3-4 turns each, `eval/question/data/`): what each turn asks about, whether
it follows up the turn before and which paper it points at. Read here with the history each turn
would have had if every earlier answer had been right (the gold paper cited, the survey's papers
listed), so the follow-up decision is judged on its own; `python -m eval.question.follow --live`
asks the real pipeline instead.

A turn: {"question", "kind": one_paper|which_paper|survey, "paper" (one paper) or "papers" (a
survey's, in order), "follows": bool, "refers_to": paper id | "all" | null}."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rag.search.survey import SurveyHit
from rag.types import Answer, Citation, Paper, SearchResult, Timings, Turn

DATA = Path(__file__).resolve().parent / "data"
TRAIN = DATA / "conversations-train.jsonl"


@dataclass(frozen=True)
class Asked:
    """One turn to decide: the question, the turns before it (answered right), and the truth."""

    conversation: str
    index: int
    question: str
    history: tuple[Turn, ...]
    follows: bool
    refers_to: str | None  # a paper id, "all", or None
    writer: str  # the conversation id's prefix: whose wording it is


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def paper(pid: str) -> Paper:
    from eval.judge.corpus import conference

    p = conference()[pid]
    return Paper(id=pid, abstract=p["abstract"], title=p["title"], status=p.get("status") or "")


def answered(turn: dict) -> Turn:
    """The turn as if answered right: its paper cited, or its survey's papers listed."""
    if turn["kind"] == "survey":
        hits = [SurveyHit(i, paper(pid), "") for i, pid in enumerate(turn["papers"], 1)]
        answer = Answer(turn["question"], "", [], [], False, [], Timings(), papers=hits)
        return Turn(turn["question"], answer)
    p = paper(turn["paper"])
    cite = Citation(1, p.id, p.title, "", [], "", 0, 0, 1.0)
    answer = Answer(turn["question"], "", [cite], [], False, [SearchResult(1, p, 1.0, [])], Timings())
    return Turn(turn["question"], answer)


def asked(conversations: list[dict]) -> Iterator[Asked]:
    """Every turn after the first, with its right history."""
    for conv in conversations:
        turns = conv["turns"]
        history = [answered(t) for t in turns]
        for i in range(1, len(turns)):
            t = turns[i]
            yield Asked(conv["id"], i, t["question"], tuple(history[:i]), bool(t["follows"]), t.get("refers_to"),
                        conv["id"].split("-")[0])  # fmt: skip
