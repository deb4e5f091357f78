"""llama.cpp options for the prompt's prefill, side by side on the same prompts: the time to first
token is mostly prefill on 2 cores, so an option is adopted only if it is faster here."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from rag.llm.models import shipped_model_path

OPTIONS = {"flash attention off": {"flash_attn": False}, "flash attention on (default)": {"flash_attn": True}}
PROMPT_TOKENS = 450  # about the median prompt of the evaluation's answers, system prompt included


def bench_prefill(models_path: Path, model: str = "qwen1.5b", rounds: int = 4) -> list[str]:
    from llama_cpp import Llama

    path = shipped_model_path(model, models_path)
    abstracts = (Path(__file__).resolve().parent.parent / "seeds" / "papers.jsonl").read_text()
    lines = [
        f"## Prefill options ({path.name}, 2 threads)",
        "",
        f"Median over {rounds} prompts of {PROMPT_TOKENS} tokens (KV cache reset before each), then "
        "40 greedy tokens decoded after the last one.",
        "",
        "| option | prefill | prompt tokens/s | decode per token |",
        "|---|---|---|---|",
    ]
    for label, option in OPTIONS.items():
        llm = Llama(model_path=str(path), n_ctx=2048, n_threads=2, n_threads_batch=2, verbose=False, **option)
        prefill, tokens = [], []
        for i in range(rounds):
            tokens = llm.tokenize(abstracts[3000 * i : 3000 * i + 4000].encode())[:PROMPT_TOKENS]
            llm.reset()
            t0 = time.perf_counter()
            llm.eval(tokens)
            prefill.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for n, _ in enumerate(llm.generate(tokens, temp=0.0, reset=False), 1):
            if n == 40:
                break
        decode = (time.perf_counter() - t0) / 40
        llm.close()
        p = statistics.median(prefill)
        lines.append(f"| {label} | {p:.2f} s | {PROMPT_TOKENS / p:.0f} | {decode * 1000:.0f} ms |")
    return lines + [""]
