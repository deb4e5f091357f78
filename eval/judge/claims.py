"""Claims through `citewise verify`'s checks, several ways side by side, in one run:
`python -m eval.judge.claims FILE... [--way judge --way rules --way verdict --way cascade]`.

Ways: `judge` (the support judge alone), `rules` (the word checks before the judge), `default`
(today's settings), `verdict` (the rules, then the model's verdict: the last round's verify),
`cascade` (today's settings, the model asked only where the judge is unsure), `control` (the
judge trained without sources, `python -m eval.judge.train --claim-only`: near chance, or the
labels leak through wording). Each claim's outcome is written as a line of `--out`; the table
gives, per kind, the share of false claims flagged and of true claims kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from eval.judge.corpus import conference
from rag.answer.trust import Trust
from rag.answer.verify import ClaimInput, ClaimVerifier
from rag.search.evidence import evidence_for
from rag.settings import TrustSettings
from rag.types import Paper

RULES = ["numbers", "quantities", "names", "polarity", "direction", "coverage", "similarity"]
TRUE_KINDS = {"paraphrase", "true_negative", "copied", "restated_number"}


def paper(paper_id: str) -> Paper:
    row = conference()[paper_id]
    return Paper(row["id"], row["abstract"], row["title"], row.get("url", ""), status=row.get("status") or "")


def truth(row: dict) -> bool:
    if "supported" in row:
        return bool(row["supported"])
    if "expect" in row:  # the outside sets' key
        return row["expect"] == "supported"
    return row.get("label") == "supported" or row.get("kind") in TRUE_KINDS


def _rows(row: dict) -> list[dict]:
    """A planted item is two claims: the draft's right sentence and the planted contradiction."""
    if "planted_sentence" not in row:
        return [row]
    base = {"paper_id": row["paper_id"], "id": row["id"]}
    return [base | {"claim": row["original_sentence"], "kind": "original", "supported": True},
            base | {"claim": row["planted_sentence"], "kind": f"planted {row['kind']}", "supported": False}]  # fmt: skip


def read(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                rows += [r | {"file": path.stem} for r in _rows(json.loads(line))]
    return [r for r in rows if r.get("paper_id") in conference()]


def trust_for(way: str) -> Trust:
    """`rules`/`verdict`: the word checks; `default`/`cascade`: today's settings; else the checks
    the way names, joined by "+" ("judge+numbers")."""
    defaults = TrustSettings()
    if way in ("rules", "verdict"):
        checks = RULES
    elif way in ("default", "cascade"):
        checks = defaults.checks
    else:
        checks = way.split("+")
    return Trust(defaults.model_copy(update={"checks": [c for c in checks if c != "paper_fit"]}))


def judge_pairs(rows: list[dict], embedder) -> list[tuple[str, str]]:
    """Each claim beside the passage the `judge` check reads: the title and the abstract's best
    sentences by the answer check's support score."""
    from rag import text as tx
    from rag.answer.trust.checks import support_score
    from rag.judge.support import passage, support_judge

    k, pairs = support_judge().sentences, []
    vectors = np.asarray(embedder.embed_batch([r["claim"] for r in rows]), dtype=np.float32)
    for r, vector in zip(rows, vectors):
        ev = evidence_for(paper(r["paper_id"]), embedder)
        words = tx.content_words(r["claim"])
        scores = [support_score(vector, words, s) for s in ev.sentences]
        pairs.append((r["claim"], passage(ev.paper.title, [s.text for s in ev.sentences], scores, k)))
    return pairs


def judge_probabilities(rows: list[dict], embedder) -> list[float]:
    """The support judge's probability that each claim is supported, read as the `judge` check reads it."""
    from rag.judge.support import support_judge

    return [j.supported for j in support_judge().judge(judge_pairs(rows, embedder))]


def half(paper_id: str) -> str:
    """Dev claims in two halves by paper (a rule must hold on both)."""
    return "a" if int(hashlib.sha1(paper_id.encode()).hexdigest()[0], 16) % 2 == 0 else "b"


def control_flags(rows: list[dict], folder: Path) -> list[bool]:
    """The claim-only control: flagged when it finds the claim not supported."""
    from rag.judge.support import SupportJudge

    judge = SupportJudge(folder)
    return [j.supported < 0.5 for j in judge.judge([(r["claim"], "") for r in rows])]


def run(rows: list[dict], way: str, embedder, llm=None, control: Path | None = None) -> list[bool]:
    """For each claim: flagged (not verified)?"""
    if way == "control":
        return control_flags(rows, control or Path("/tmp/citewise-judge/control/onnx"))
    entail = None
    if way in ("verdict", "cascade"):
        from rag.answer.verdicts import stance

        def entail(text, passage, ev):
            return stance(llm, text, ev.paper.display_title, passage)

    verifier = ClaimVerifier(None, embedder, trust_for(way), entail=entail)  # type: ignore[arg-type]
    flagged, seconds = [], []
    for i, r in enumerate(rows):
        of = paper(r["paper_id"])
        if of.id not in verifier._evidence:  # its sentences embedded once, untimed, as in a running verify
            verifier._evidence[of.id] = evidence_for(of, embedder)
        started = time.perf_counter()
        flagged.append(not verifier.check(ClaimInput(str(i), r["claim"]), of).supported)
        seconds.append(time.perf_counter() - started)
    TIMES[way] = seconds
    return flagged


# Seconds per claim of each way (the paper's sentences already embedded, as in a running `verify`).
TIMES: dict[str, list[float]] = {}


def table(rows: list[dict], results: dict[str, list[bool]]) -> str:
    kinds = sorted(
        {r["kind"] for r in rows}, key=lambda k: (truth(next(r for r in rows if r["kind"] == k)), k)
    )
    ways = list(results)
    lines = ["| kind | n | " + " | ".join(ways) + " |", "|---|---|" + "---|" * len(ways)]
    for kind in kinds:
        idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
        true = truth(rows[idx[0]])
        cells = [f"{np.mean([results[w][i] != true for i in idx]):.2f}" for w in ways]
        label = f"{kind} ({'kept' if true else 'flagged'})"
        lines.append(f"| {label} | {len(idx)} | " + " | ".join(cells) + " |")
    for name, pick in (("all false: flagged", False), ("all true: kept", True)):
        idx = [i for i, r in enumerate(rows) if truth(r) is pick]
        cells = [f"{np.mean([results[w][i] != pick for i in idx]):.3f}" for w in ways]
        lines.append(f"| **{name}** | {len(idx)} | " + " | ".join(cells) + " |")
    bal = [f"{balanced(rows, results[w]):.3f}" for w in ways]
    lines.append(f"| **balanced accuracy** | {len(rows)} | " + " | ".join(bal) + " |")
    return "\n".join(lines)


def balanced(rows: list[dict], flagged: list[bool]) -> float:
    by = defaultdict(list)
    for r, f in zip(rows, flagged):
        by[truth(r)].append(f != truth(r))
    return float(np.mean([np.mean(v) for v in by.values()]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument(
        "--way", action="append", default=None, help="judge, rules, default, verdict, cascade, control"
    )
    parser.add_argument("--out", type=Path, default=None, help="one JSON line per claim and way")
    parser.add_argument("--control", type=Path, default=None, help="the control judge's folder")
    parser.add_argument(
        "--halves", action="store_true", help="a table for each half of the claims (by paper)"
    )
    parser.add_argument(
        "--probabilities", type=Path, default=None, help="write the judge's p(supported) per claim"
    )
    args = parser.parse_args()
    from rag.index.embedding import embedder_from_settings
    from rag.settings import Settings

    rows, ways = read(args.files), args.way or ["judge", "rules", "default"]
    embedder, llm = embedder_from_settings(Settings()), None  # the embedder answers use
    if {"verdict", "cascade"} & set(ways):
        from rag.answer.pipeline import Pipeline

        llm = Pipeline(Settings()).llm()
    results = {w: run(rows, w, embedder, llm, args.control) for w in ways}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w") as f:
            for i, r in enumerate(rows):
                f.write(json.dumps({"claim": r.get("id", i), "kind": r["kind"], "true": truth(r)}
                                   | {w: results[w][i] for w in ways}) + "\n")  # fmt: skip
    if args.probabilities:
        probs = judge_probabilities(rows, embedder)
        args.probabilities.write_text("".join(json.dumps({"kind": r["kind"], "true": truth(r), "file": r["file"],
                                                          "half": half(r["paper_id"]), "p": round(p, 4)}) + "\n"
                                              for r, p in zip(rows, probs)))  # fmt: skip
    print(f"{len(rows)} claims from {', '.join(p.name for p in args.files)}")
    print(table(rows, results))
    for way, seconds in TIMES.items():
        print(
            f"{way}: seconds a claim p50 {np.percentile(seconds, 50):.3f}, p95 {np.percentile(seconds, 95):.3f}"
        )
    for name in ("a", "b") if args.halves else ():
        idx = [i for i, r in enumerate(rows) if half(r["paper_id"]) == name]
        print(f"\nhalf {name}:")
        print(table([rows[i] for i in idx], {w: [v[i] for i in idx] for w, v in results.items()}))


if __name__ == "__main__":
    main()
