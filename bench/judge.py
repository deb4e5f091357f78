"""The judges' cost: `python -m bench.judge [--claims FILE] [--answer GOLD] [--about N]`.

Support judge: scores each claim of a claims file against its paper's best sentences, as `citewise
verify` and the answer check do, one pair at a time (what an answer sentence costs) and in batches
of 16 (what a whole answer or a claims file costs). Answer judge (`--answer`): for each question of
a gold file, every sentence of five abstracts (its paper's and the next four of the conference
file: about what a question's sources hold), scored in one call, as the evidence does. Prints
milliseconds with the CPU's name. Membership judge (`--about 300`): a survey list's 300 candidates,
each a title and one sentence, in one call; and the question reader, one question at a time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from eval.metrics import percentiles
from rag.index.embedding.choice import cpu_model
from rag.judge.support import support_judge

CLAIMS = Path(__file__).resolve().parents[1] / "eval" / "claims" / "conference-dev.jsonl"


def pairs_of(path: Path) -> list[tuple[str, str]]:
    from eval.judge.claims import judge_pairs, read
    from rag.index.embedding import embedder_from_settings
    from rag.settings import Settings

    return judge_pairs(read([path]), embedder_from_settings(Settings()))


def answer_cost(gold: Path) -> None:
    """Milliseconds the answer judge takes to score five abstracts for each question of `gold`."""
    import json

    from eval.judge.corpus import abstract_sentences, conference
    from rag.judge.answer import answer_judge

    papers = conference()
    ids = list(papers)
    rows = [json.loads(line) for line in gold.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if len(r.get("papers", [])) == 1 and r["papers"][0] in papers]
    judge = answer_judge()
    judge.scores("warm up", [("t", "a sentence")])
    times, sizes = [], []
    for r in rows:
        at = ids.index(r["papers"][0])
        texts = [(papers[p]["title"], s) for p in ids[at : at + 5] for s in abstract_sentences(p)]
        started = time.perf_counter()
        judge.scores(r["question"], texts)
        times.append((time.perf_counter() - started) * 1000)
        sizes.append(len(texts))
    p = percentiles(times)
    print(f"answer judge on {cpu_model()}, {len(rows)} questions of {gold.name}, "
          f"{sum(sizes) / len(sizes):.0f} sentences each:")  # fmt: skip
    print(f"  a question's sentences: p50 {p['p50']:.0f} ms, p95 {p['p95']:.0f} ms; "
          f"{sum(times) / sum(sizes):.1f} ms a sentence")  # fmt: skip


def about_cost(n: int, rounds: int = 5) -> None:
    """Milliseconds the membership judge takes to read `n` candidates of a survey list (each a
    title and one sentence, as `rag.search.membership` reads them), and the question reader a
    question."""
    from eval.judge.corpus import abstract_sentences, conference
    from rag.judge.answer import about_judge
    from rag.question.reader import question_reader

    papers = conference()
    ids = list(papers)
    judge = about_judge()
    judge.scores("warm up", [("t", "a sentence")])
    times = []
    for r in range(rounds):
        texts = [(papers[p]["title"], abstract_sentences(p)[0]) for p in ids[r * n : (r + 1) * n]]
        started = time.perf_counter()
        judge.scores("Which papers study model editing?", texts)
        times.append((time.perf_counter() - started) * 1000)
    reader = question_reader()
    reader.read("warm up")
    read = []
    for q in [
        "Which papers study grokking?",
        "What work looks at X, i.e. Y?",
        "papers on data augmentation for time series",
    ] * 5:
        started = time.perf_counter()
        reader.read(q)
        read.append((time.perf_counter() - started) * 1000)
    p, q = percentiles(times), percentiles(read)
    print(f"membership judge on {cpu_model()}: {n} candidates in p50 {p['p50']:.0f} ms (p95 {p['p95']:.0f} ms, "
          f"{rounds} lists); question reader p50 {q['p50']:.1f} ms a question")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument(
        "--answer", type=Path, default=None, help="time the answer judge on this gold file instead"
    )
    parser.add_argument(
        "--about", type=int, default=0, help="time the membership judge on N candidates instead"
    )
    args = parser.parse_args()
    if args.about:
        about_cost(args.about)
        return
    if args.answer:
        answer_cost(args.answer)
        return
    pairs = pairs_of(args.claims)
    judge = support_judge()
    judge.judge(pairs[:4])  # load and warm up
    single = []
    for pair in pairs:
        started = time.perf_counter()
        judge.judge([pair])
        single.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    judge.judge(pairs)
    batched = (time.perf_counter() - started) * 1000 / len(pairs)
    p = percentiles(single)
    print(f"support judge on {cpu_model()}, {len(pairs)} claims of {args.claims.name}:")
    print(
        f"  one pair a call: p50 {p['p50']:.1f} ms, p95 {p['p95']:.1f} ms; in batches of 16: {batched:.1f} ms a pair"
    )


if __name__ == "__main__":
    main()
