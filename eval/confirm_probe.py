"""How sure the model is when it confirms a paper (`paper_fit`): `python -m eval.confirm_probe --split dev`.

For every gold question that asks for one paper, the top two sources the pipeline would offer are
put to the confirmation prompt (`prompts.CONFIRM_*`), and the model's probability of YES is read
from its first token (P(YES) / (P(YES) + P(NO)), llama.cpp logits of the embedded model). One line
per (item, source): the item's type, whether the source is a right paper, P(YES). This is how the
question prompt was chosen over round 8's statement prompt (docs/evaluation.md, round 10).
The model is loaded a second time with `logits_all` (the pipeline's copy keeps only the last
token's logits, which is all generation needs).
"""

from __future__ import annotations

import argparse
import math

from eval.gold import DEFAULT_GOLD, load_gold
from rag.answer import Pipeline
from rag.prompts import CONFIRM_SYSTEM, CONFIRM_USER
from rag.questions import asks_for_paper, asks_for_papers


def p_yes(llama, system: str, user: str) -> float:
    """The model's probability of YES against NO as its first token of the reply."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    reply = llama.create_chat_completion(messages=messages, max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=10)  # fmt: skip
    top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    yes = sum(math.exp(t["logprob"]) for t in top if t["token"].strip().upper().startswith("Y"))
    no = sum(math.exp(t["logprob"]) for t in top if t["token"].strip().upper().startswith("N"))
    return yes / (yes + no) if yes + no else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", help="dev or test")
    args = parser.parse_args(argv)
    from llama_cpp import Llama

    pipeline = Pipeline()
    s, embedder = pipeline.settings, pipeline.embedder
    path = pipeline.llm("llamacpp").path  # the embedded model, whatever the backend setting
    llama = Llama(model_path=str(path), n_ctx=2048, n_threads=s.llm_threads, logits_all=True, verbose=False)
    for item in load_gold([DEFAULT_GOLD / f"{args.split}.jsonl"]):
        q = item.question
        if not asks_for_paper(q) or asks_for_papers(q):
            continue
        qvec = embedder.embed(q)
        results = pipeline.search(q, s.answer_k, query_vector=qvec)
        evidence = pipeline.sources(q, qvec, results)
        for ev in evidence[:2]:
            right = ev.paper.id in item.papers and item.type != "unanswerable"
            user = CONFIRM_USER.format(title=ev.paper.display_title, text=ev.text, question=q)
            print(
                f"{item.id:9s} {item.type:12s} right={int(right)} P(YES)={p_yes(llama, CONFIRM_SYSTEM, user):.3f}"
            )


if __name__ == "__main__":
    main()
