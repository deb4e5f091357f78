"""`citewise eval --verifier`: the claim benchmark.

True claims (every sentence of every indexed abstract, copied; hand-written paraphrases of gold
facts) and false ones (a number changed, negated, a direction flipped, a name swapped for another
paper's, another paper's sentence), each checked against the abstract it claims to come from.
Corruptions come from two places: a generator that edits abstract sentences (below), and
hand-written ones in `eval/gold/claims.jsonl`, written from the abstracts. Two checkers side by
side: citewise's claim checks (`rag.answer.trust`) and the similarity score the answer check used
before them ("before": 0.6 x cosine + 0.4 x word overlap >= 0.45, a wrong number halving it, and
sentences of fewer than three content words passed unchecked).
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eval.gold import read_jsonl
from rag import text as tx
from rag.answer.trust import Trust, support_score
from rag.search.evidence import Evidence, evidence_for
from rag.types import Paper

# Hand-written claims: dev.jsonl was used while the checks were built; test.jsonl was written
# afterwards (docs/evaluation.md says how far it stayed held out).
HANDWRITTEN = (
    Path(__file__).parent / "claims" / "dev.jsonl",
    Path(__file__).parent / "claims" / "test.jsonl",
)
TRUE_KINDS = ("copied", "paraphrase")
FALSE_KINDS = ("number", "negation", "direction", "name", "other_paper")


@dataclass
class Claim:
    id: str
    claim: str
    paper_id: str
    kind: str
    source: str  # "generated" or "hand-written"

    @property
    def true(self) -> bool:
        return self.kind in TRUE_KINDS


def load_handwritten(paths: tuple[Path, ...] = HANDWRITTEN) -> list[Claim]:
    """Hand-written claims; their source is "hand-written <file stem>" (dev or test)."""
    out = []
    for path in paths:
        rows = read_jsonl(path)
        out += [
            Claim(r["id"], r["claim"], r["paper_id"], r["kind"], f"hand-written {path.stem}") for r in rows
        ]
    return out


# ---- the generator

_AUX = re.compile(r"\b(is|are|was|were|can|does|do|will|has|have|could|would|should)\b(?! not)")
_VERB_S = re.compile(
    r"\b(achieves|improves|outperforms|shows|reduces|enables|demonstrates|surpasses|enhances|"
    r"provides|allows|captures|delivers|leads|requires|offers|supports|yields|exhibits|reveals|"
    r"exists|emerges|helps|boosts|exceeds|matches|generalizes|scales|increases|performs)\b"
)
ANTONYMS = {
    "increase": "decrease", "increases": "decreases", "increased": "decreased", "increasing": "decreasing",
    "improves": "degrades", "improve": "degrade", "improved": "degraded", "improving": "degrading",
    "reduces": "increases", "reduce": "increase", "reduced": "increased", "reducing": "increasing",
    "higher": "lower", "more": "less", "larger": "smaller", "faster": "slower", "better": "worse",
    "outperforms": "underperforms", "outperform": "underperform", "fewer": "more", "enhances": "impairs",
    "enhance": "impair", "accelerates": "slows", "longer": "shorter", "boosts": "lowers",
    "greater": "smaller", "lower": "higher", "less": "more", "smaller": "larger", "shorter": "longer",
    "decline": "rise", "decreases": "increases",
}  # fmt: skip


def negate(sentence: str) -> str | None:
    """Insert a negation at the first auxiliary ("is" -> "is not") or -s verb ("improves" ->
    "does not improve")."""
    m = _AUX.search(sentence)
    v = _VERB_S.search(sentence)
    if m and (not v or m.start() < v.start()):
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    if v:
        return sentence[: v.start()] + "does not " + v.group(1)[:-1] + sentence[v.end() :]
    return None


def flip_direction(sentence: str) -> str | None:
    for m in re.finditer(r"[A-Za-z]+", sentence):
        word = m.group(0)
        if word.lower() in ANTONYMS:
            return sentence[: m.start()] + ANTONYMS[word.lower()] + sentence[m.end() :]
    return None


def change_number(sentence: str, abstract: str, rng: random.Random) -> str | None:
    stated = tx.numbers(abstract)
    found = [m for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?", sentence)]
    if not found:
        return None
    m = rng.choice(found)
    value = m.group(0)
    for delta in (7, 3, 11, 13):
        new = f"{float(value) + delta:.{len(value.split('.')[1]) if '.' in value else 0}f}"
        if tx.numbers(new) and not tx.numbers(new) & stated:
            return sentence[: m.start()] + new + sentence[m.end() :]
    return None


def swap_name(sentence: str, abstract: str, other_names: list[str], rng: random.Random) -> str | None:
    own = [
        n for n in sorted(tx.names(sentence)) if not n.isupper() or len(n) > 2
    ]  # sorted: the same claims every run
    foreign = [n for n in other_names if not tx.name_in(n, abstract)]
    if not own or not foreign:
        return None
    target = rng.choice(own)
    return sentence.replace(target, rng.choice(foreign), 1)


def generate(papers: list[Paper], embedder, *, seed: int = 0, per_kind: int = 200) -> list[Claim]:
    """Copied sentences and corrupted ones of every kind from the indexed abstracts."""
    rng = random.Random(seed)
    claims: dict[str, list[Claim]] = defaultdict(list)
    names_by_paper = {p.id: sorted(tx.names(p.text)) for p in papers}
    means = np.asarray([np.mean(embedder.embed_batch(tx.sentences(p.abstract)), axis=0) for p in papers])
    for i, paper in enumerate(papers):
        others = [n for p in papers if p.id != paper.id for n in names_by_paper[p.id]]
        nearest = papers[int(np.argsort(-(means @ means[i]))[1])]
        for j, sentence in enumerate(tx.sentences(paper.abstract)):
            if len(tx.content_words(sentence)) < 4:
                continue
            cid = f"{paper.id}-{j}"
            edits: dict[str, str | None] = {
                "copied": sentence,
                "number": change_number(sentence, paper.abstract, rng),
                "negation": negate(sentence),
                "direction": flip_direction(sentence),
                "name": swap_name(sentence, paper.title + " " + paper.abstract, others, rng),
            }
            for kind, text in edits.items():
                if text and text != sentence or kind == "copied":
                    claims[kind].append(Claim(f"{cid}-{kind}", text or sentence, paper.id, kind, "generated"))
        # Another paper's sentences, checked against this one: its nearest neighbour's sentences.
        for j, sentence in enumerate(tx.sentences(nearest.abstract)):
            if len(tx.content_words(sentence)) >= 4:
                claims["other_paper"].append(
                    Claim(f"{paper.id}-other-{j}", sentence, paper.id, "other_paper", "generated")
                )
    out: list[Claim] = []
    for kind, items in claims.items():
        rng.shuffle(items)
        out += items if kind == "copied" else items[:per_kind]
    return out


# ---- the two checkers


def _legacy_supported(claim: str, vector: np.ndarray, ev: Evidence) -> bool:
    """The answer check before the claim checks: topic similarity with a number penalty."""
    words = tx.content_words(claim)
    if len(words) < 3:
        return True
    passage = " ".join(s.text for s in ev.sentences)
    best = max(support_score(vector, words, s) for s in ev.sentences)
    if tx.numbers(claim) and not tx.numbers(claim) <= tx.numbers(passage):
        best *= 0.5
    return best >= 0.45


Checker = Callable[[str, np.ndarray, Evidence], bool]


def checkers(trust: Trust) -> dict[str, Checker]:
    out: dict[str, Checker] = {
        "citewise": lambda c, v, ev: trust.verify(c, v, ev, whole=True).passed,
        "before": _legacy_supported,
    }
    # Ablation: each check off in turn (paper_fit judges a whole answer, not a claim: not here).
    for name in (c.name for c in trust.claim_checks if not c.by_model):
        variant = trust.without(name)
        out[f"without {name}"] = lambda c, v, ev, t=variant: t.verify(c, v, ev, whole=True).passed
    return out


def run(claims: list[Claim], papers: dict[str, Paper], embedder, trust: Trust) -> dict:
    """Per checker, source and kind: how many claims, and the share judged supported."""
    evidence = {pid: evidence_for(p, embedder) for pid, p in papers.items()}
    vectors = np.asarray(embedder.embed_batch([c.claim for c in claims]), dtype=np.float32)
    table: dict = {}
    misses: dict[str, list[dict]] = defaultdict(list)
    for name, check in checkers(trust).items():
        counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        for claim, vec in zip(claims, vectors):
            ok = check(claim.claim, vec, evidence[claim.paper_id])
            counts[(claim.source, claim.kind)][0] += 1
            counts[(claim.source, claim.kind)][1] += int(ok)
            if name == "citewise" and ok != claim.true and claim.source.startswith("hand-written"):
                misses[claim.kind].append({"id": claim.id, "claim": claim.claim, "paper_id": claim.paper_id})
        table[name] = {
            f"{src}/{kind}": {"n": n, "supported": s / n} for (src, kind), (n, s) in counts.items()
        }
    return {"checkers": table, "hand_written_misses": misses}


def render(result: dict) -> list[str]:
    """Markdown: per kind, the share flagged (false kinds) or supported (true kinds)."""
    table = result["checkers"]
    keys = sorted(next(iter(table.values())), key=lambda k: (k.split("/")[0], _order(k.split("/")[1])))
    lines = [
        "## Claim checks (`citewise eval --verifier`)",
        "",
        "Share of claims **supported** for true kinds (copied, paraphrase) and **flagged** for "
        "corrupted kinds; n = claims. `before` = the similarity-only check used until now; "
        "`without X` = citewise with check X switched off.",
        "",
        "| checker | " + " | ".join(f"{k} (n={table['citewise'][k]['n']})" for k in keys) + " |",
        "|---" * (len(keys) + 1) + "|",
    ]
    for name, row in table.items():
        cells = []
        for k in keys:
            share = row[k]["supported"]
            cells.append(f"{share if k.split('/')[1] in TRUE_KINDS else 1 - share:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    misses = result["hand_written_misses"]
    if misses:
        lines += ["", "Hand-written claims citewise gets wrong:", ""]
        lines += [
            f"- {kind}: {m['id']} “{m['claim']}” ({m['paper_id']})" for kind, ms in misses.items() for m in ms
        ]
    return lines


def _order(kind: str) -> int:
    return (TRUE_KINDS + FALSE_KINDS).index(kind) if kind in TRUE_KINDS + FALSE_KINDS else 99


def benchmark(
    pipeline, out: Path, *, handwritten: tuple[Path, ...] = HANDWRITTEN, per_kind: int = 200
) -> dict:
    """Generate claims from the indexed papers, add the hand-written ones, run both checkers,
    write `verifier.json` and `verifier.md` into `out`."""
    ids = sorted({meta["paper_id"] for _, meta, _ in pipeline.store.iter_chunks(include_documents=False)})
    papers = pipeline.store.papers(ids)
    claims = generate([papers[i] for i in ids], pipeline.embedder, per_kind=per_kind)
    written = load_handwritten(handwritten)
    unknown = sorted({c.paper_id for c in written} - set(papers))
    if unknown:
        raise ValueError(f"hand-written claims: paper id(s) not in the index: {', '.join(unknown)}")
    result = run(claims + written, papers, pipeline.embedder, pipeline.trust)
    out.mkdir(parents=True, exist_ok=True)
    (out / "verifier.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    (out / "verifier.md").write_text("\n".join(render(result)) + "\n", encoding="utf-8")
    return result
