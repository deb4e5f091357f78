"""What the chat page shows while a user waits (`python -m bench.page [--data-dir DIR]`): for a few
questions asked through the page's handler (`ui.app.respond`) with the settings' index and model,
the seconds until the progress line, the sources, the first draft token and the checked answer;
and what the follow-up decision adds to a question asked after another."""

from __future__ import annotations

import statistics
import time

from bench.sentence import cpu

QUESTIONS = (
    "How many time points are in the Time-300B dataset used to pre-train Time-MoE?",
    "What does knowledge entropy measure?",
    "Which paper makes MoE routers into embeddings, and how many tasks do they test on?",
)


def main() -> None:
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings
    from ui.app import respond

    pipeline = Pipeline(Settings())
    pipeline.store.stats()  # open the index before timing
    seen: dict[str, list[float]] = {"progress": [], "sources": [], "draft": [], "answer": []}
    turns = None
    for question in QUESTIONS:
        started, marks = time.perf_counter(), {}
        for messages, kept in respond(question, [], 3, "auto", 0.0, [], pipeline=pipeline):
            text, now, turns = messages[-1]["content"], time.perf_counter() - started, kept
            for key, sign in (("progress", "cw-progress"), ("sources", "Sources found"), ("draft", "Draft")):
                if key not in marks and sign in text:
                    marks[key] = now
            marks["answer"] = now
        for key, value in marks.items():
            seen[key].append(value)
    history = [turns[-1]] if turns else []
    follow = pipeline.follow
    if follow is not None and history:
        started = time.perf_counter()
        for _ in range(5):
            pipeline.parse("Which datasets did they use?", history)
        decision = (time.perf_counter() - started) / 5
    else:
        decision = float("nan")
    print(f"CPU: {cpu()}; {len(QUESTIONS)} questions, each alone, through the page's handler")
    for key, values in seen.items():
        if values:
            print(f"  {key:9s} median {statistics.median(values):6.2f} s   max {max(values):6.2f} s")
    print(f"  reading a follow-up (parse with the decision): {decision * 1000:.0f} ms")


if __name__ == "__main__":
    main()
