"""Judge stored drafts again without generating: `citewise eval --replay DIR`.

Generation is the slow part of an evaluation (about 8 s an item with the default model on two
cores); the checks and rules take milliseconds. A run keeps every draft in `results.jsonl`, so a
change to a check or rule is measured by replaying those drafts through the same pipeline: the
same retrieval and evidence, the stored draft instead of the model. Latency in such a run is not a measurement of anything and
is reported as missing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from eval.gold import read_jsonl
from rag.answer.audit import is_audit
from rag.answer.prompts import CONFIRM_SYSTEM, CONFIRM_USER, ENTAIL_SYSTEM
from rag.llm.base import LLM, LLMError, Message


class ReplayLLM(LLM):
    """Answers each prompt with the draft stored for its question in a run's results.jsonl."""

    backend = "replay"

    def __init__(self, folder: Path, live: Callable[[], LLM] | None = None):
        self.model = f"replay of {folder}"
        self.live = live  # asked what no stored run answered (the paper confirmations of newer rules)
        # (question, title) -> verdict. Runs before round 10 stored `confirmed`, the answer to another
        # prompt (a statement rebuilt from the question): not read.
        self.confirmed: dict[tuple[str, str], bool] = {}
        self.drafts: dict[str, str] = {}
        self.items: set[str] = set()  # ids of the gold items with a stored draft
        self.cache = folder / "live.jsonl"  # the live model's verdicts on these drafts, by prompt
        self.asked = {r["key"]: r["reply"] for r in read_jsonl(self.cache)} if self.cache.is_file() else {}
        rows = read_jsonl(folder / "results.jsonl")
        # Drafts are found by question: two configurations' drafts of one question (citewise and the
        # baseline, or two index sizes) would overwrite each other, and the replay would be wrong.
        configs = sorted({row.get("config", "") for row in rows if row.get("answered") and row.get("draft")})
        if len(configs) > 1:
            raise ValueError(
                f"{folder} holds the drafts of {len(configs)} configurations ({', '.join(configs)}): "
                "a replay reads one; keep the rows of one `config` in a folder of their own"
            )
        for row in rows:
            if row.get("answered") and row.get("draft") is not None:
                self.items.add(row["id"])
                self.drafts[row["query"]] = row["draft"]
                self.drafts.setdefault(row["question"], row["draft"])
                for title, verdict in (row.get("paper_confirmed") or {}).items():
                    self.confirmed[(row["question"], title)] = verdict
            for turn in row.get("turns") or ():  # a follow-up's earlier turns, answered first
                if turn.get("draft"):
                    self.drafts.setdefault(turn["query"], turn["draft"])

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        prompt = messages[-1]["content"]
        if is_audit(messages):  # the model's verdict on a draft: the live model's, kept
            yield self._live(messages, max_tokens, grammar)
            return
        if messages[0]["content"] == CONFIRM_SYSTEM:
            yield from self._confirm(messages, max_tokens=max_tokens)
            return
        if messages[0]["content"] == ENTAIL_SYSTEM:  # the verdict on one sentence: the live model's
            if self.live is None:
                raise LLMError("no live model for the entailment verdict")
            yield self._live(messages, max_tokens)
            return
        question = prompt.split("\n", 1)[0].removeprefix("Question: ").strip()
        if question not in self.drafts:
            raise LLMError(f"no stored draft for {question!r}")
        yield self.drafts[question]

    def _live(self, messages: list[Message], max_tokens: int, grammar: str | None = None) -> str:
        """The live model's short verdict, kept in the replayed folder (`live.jsonl`): replaying the
        same drafts under another rule set asks the model only what it was not asked before."""
        if self.live is None:
            raise LLMError("no stored verdict and no live model")
        key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        if key not in self.asked:
            reply = self.live().complete(messages, max_tokens=max_tokens, temperature=0.0, grammar=grammar)
            self.asked[key] = reply
            with self.cache.open("a") as f:
                f.write(json.dumps({"key": key, "reply": reply}) + "\n")
        return self.asked[key]

    def _confirm(self, messages: list[Message], *, max_tokens: int) -> Iterator[str]:
        """The stored confirmation of a paper, or the live model's when the run stored none."""
        m = _CONFIRM.fullmatch(messages[-1]["content"])
        title, question = (m["title"], m["question"]) if m else ("", "")
        if (question, title) in self.confirmed:
            yield "YES" if self.confirmed[(question, title)] else "NO"
            return
        yield self._live(messages, max_tokens)


# The confirmation prompt read back: CONFIRM_USER with its fields as groups.
_CONFIRM = re.compile(
    re.escape(CONFIRM_USER)
    .replace(re.escape("{title}"), "(?P<title>.*?)")
    .replace(re.escape("{text}"), ".*")
    .replace(re.escape("{question}"), "(?P<question>.*?)"),
    re.S,
)
