"""`python -m bench`: measure ingest, search and answer speed on this machine and write
docs/benchmarks.md. Medians of one run; the machine is noisy, so compare ratios within a run."""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import time
from pathlib import Path

from bench.cold import bench_cold_start
from bench.scale import bench_scale
from eval.metrics import percentiles
from rag.answer.pipeline import AnswerEvent, Pipeline, SourcesEvent
from rag.answer.prompts import build_messages
from rag.index.embedding import embedder_from_settings
from rag.index.embedding.choice import cpu_model
from rag.index.ingest import dedupe, ingest
from rag.index.readers import read_paths
from rag.index.sentence_vectors import sentence_vectors_from_settings
from rag.index.store import store_from_settings
from rag.settings import Settings
from rag.text import sentence_spans

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "How does knowledge entropy change as language model pretraining progresses?",
    "How many time points are in the Time-300B dataset used to pre-train Time-MoE?",
    "What perplexity does STBLLM reach at 0.55 bits per weight?",
]
SEARCHES = [
    "Compressing LLM weights below one bit per parameter",
    "Dataset of bird sound recordings for benchmarking audio classifiers",
    "Keeping a million tokens of context by cascading key-value cache buffers",
    "Making a model forget copyrighted or private facts at large scale",
    "Zeroing small hidden-state activations without retraining to decode faster",
] * 4


def bench_ingest(data: Path) -> list[str]:
    settings = Settings(data_dir=data)
    embedder = embedder_from_settings(settings)
    embedder.embed("warm up")  # load outside the timings
    store = store_from_settings(settings, embedder)
    sentences = sentence_vectors_from_settings(settings, embedder)  # as `citewise ingest` keeps them
    summary = ingest(
        [ROOT / "seeds"], store, embedder, chunk_tokens=settings.chunk_tokens, sentences=sentences
    )
    again = ingest([ROOT / "seeds"], store, embedder, chunk_tokens=settings.chunk_tokens, sentences=sentences)
    papers, _ = dedupe(read_paths([ROOT / "seeds"]).papers)
    # What ingest embeds: every abstract's sentences and every title, once.
    texts = [p.title for p in papers if p.title] + [
        p.abstract[s:e] for p in papers for s, e in sentence_spans(p.abstract)
    ]
    t0 = time.perf_counter()
    embedder.embed_batch(texts)
    raw = time.perf_counter() - t0
    pipeline_rate = summary.chunks_embedded / summary.seconds
    return [
        f"## Ingest (seeds: 3 files, 57 abstracts, 53 unique; embedder {embedder.model_id})",
        "",
        "| measure | value |",
        "|---|---|",
        f"| full ingest (read, dedupe, chunk, embed, store) | {summary.seconds:.1f} s for "
        f"{summary.chunks_embedded} chunks = {pipeline_rate:.1f} chunks/s |",
        f"| of which embedding | {summary.embed_seconds:.1f} s |",
        f"| raw `embed_batch` of the {len(texts)} sentences and titles ingest embeds | {raw:.1f} s |",
        f"| pipeline / raw time | {summary.seconds / raw:.2f} |",
        f"| re-ingest, nothing changed | {again.seconds:.2f} s, {again.chunks_embedded} chunks embedded |",
        "",
    ]


def bench_search(data: Path) -> list[str]:
    pipeline = Pipeline(Settings(data_dir=data))
    pipeline.search("warm up", 5)
    times = []
    for q in SEARCHES:
        t0 = time.perf_counter()
        pipeline.search(q, 5)
        times.append(time.perf_counter() - t0)
    return [
        "## Search (query embedding + dense + BM25 + fusion, k=5, seeds index)",
        "",
        f"p50 {percentiles(times)['p50'] * 1000:.0f} ms, p95 {percentiles(times)['p95'] * 1000:.0f} ms over "
        f"{len(times)} queries.",
        "",
    ]


def bench_answers(data: Path, models: list[str]) -> list[str]:
    lines = [
        "## Answers (embedded llama.cpp, 2 threads, temperature 0)",
        "",
        "Prefill limit = llama.cpp's own time to process the same prompt (KV cache reset, 1 token "
        "generated); the ratio compares our time to first token with it.",
        "",
        "| model | question | prompt tokens | sources shown | first token | prefill limit | ratio | total | "
        "generated tokens/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for model in models:
        settings = Settings(
            data_dir=data, models_path=ROOT / "data" / "models", llm_backend="llamacpp", model=model
        )
        pipeline = Pipeline(settings)
        llm = pipeline.llm()
        llm.complete([{"role": "user", "content": "hi"}], max_tokens=1)  # load outside the timings
        for q in QUESTIONS:
            llm.reset()
            t0 = time.perf_counter()
            sources_at, answer = None, None
            for event in pipeline.stream(q):
                if isinstance(event, SourcesEvent):
                    sources_at = time.perf_counter() - t0
                elif isinstance(event, AnswerEvent):
                    answer = event.answer
            t = answer.timings
            gen_tokens = llm.count_tokens(answer.text) if answer.text else 0
            gen_rate = (
                gen_tokens / (t.total - t.first_token) if t.first_token and t.total > t.first_token else 0
            )
            qv = pipeline.embedder.embed(q)
            ev = pipeline.sources(answer.intent, qv, answer.retrieved)
            llm.reset()
            p0 = time.perf_counter()
            llm.complete(build_messages(q, ev), max_tokens=1)
            prefill = time.perf_counter() - p0
            ft = t.first_token or float("nan")
            lines.append(
                f"| {model} | {q[:48]}… | {answer.prompt_tokens} | {sources_at:.2f} s | {ft:.1f} s | "
                f"{prefill:.1f} s | {ft / prefill:.2f} | {t.total:.1f} s | {gen_rate:.1f} |"
            )
    lines.append("")
    return lines


SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}


def parse_size(text: str) -> int:
    if text in SIZES:
        return SIZES[text]
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be 1k, 10k, 100k or a number, not {text!r}") from None


SECTIONS = ("ingest", "search", "answers", "prefill", "cold", "embedders", "scale", "floor")


def write_sections(path: Path, blocks: dict[str, list[str]], head: list[str]) -> str:
    """Replace each named block of the report (between `<!-- bench:NAME -->` markers) and keep the
    others: sections measured in different runs (the 100k row takes hours) live side by side, each
    with the date and command of its own run."""
    import re

    text = path.read_text() if path.exists() else ""
    for name, lines in blocks.items():
        block = f"<!-- bench:{name} -->\n" + "\n".join(lines).rstrip() + f"\n<!-- /bench:{name} -->"
        pattern = re.compile(rf"<!-- bench:{name} -->.*?<!-- /bench:{name} -->", re.S)
        text = (
            pattern.sub(lambda _, b=block: b, text)
            if pattern.search(text)
            else text.rstrip() + "\n\n" + block
        )
    body = re.sub(r"\A.*?(?=<!-- bench:)", "", text, flags=re.DOTALL)
    text = "\n".join(head) + "\n" + body.strip() + "\n"
    path.write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--size", type=parse_size, default=10_000,
                        help="largest synthetic corpus: 1k, 10k, 100k or N; every smaller standard size runs too")  # fmt: skip
    parser.add_argument("--models", nargs="*", default=["qwen1.5b", "qwen0.5b"])
    parser.add_argument("--only", nargs="*", choices=SECTIONS, default=list(SECTIONS),
                        help="measure these sections and replace them in the report, keeping the others")  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="CI smoke run: 300 synthetic papers, SmolLM2 only, to a temporary report")  # fmt: skip
    parser.add_argument("--corpus", type=Path, default=None,
                        help="the corpus the floor section ingests whole (e.g. the conference's .jsonl.gz)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="report file (default docs/benchmarks.md)")
    args = parser.parse_args()
    if args.quick:
        sizes, models = [300], ["smollm2"]
    else:
        sizes = sorted({n for n in SIZES.values() if n < args.size} | {args.size})
        models = args.models
    out = args.out or (
        Path(tempfile.gettempdir()) / "citewise-bench-quick.md"
        if args.quick
        else ROOT / "docs" / "benchmarks.md"
    )
    only = set(args.only)
    if args.only == ["floor"] and not args.corpus:
        parser.error("the floor section ingests a whole corpus: give it with --corpus")
    command = ".venv/bin/python -m bench " + ("--quick" if args.quick else f"--size {args.size}")
    if only != set(SECTIONS):
        command += " --only " + " ".join(sorted(only))
    if args.corpus and "floor" in only:
        command += f" --corpus {args.corpus}"
    stamp = f"<sub>Measured {time.strftime('%Y-%m-%d')}: `{command}`</sub>"
    blocks: dict[str, list[str]] = {}
    data = Path(tempfile.mkdtemp(prefix="citewise-bench-"))
    try:
        if only & {"ingest", "search", "answers", "cold"}:
            ingest_lines = bench_ingest(data)  # the seeds index every later section uses
            if "ingest" in only:
                blocks["ingest"] = ingest_lines
        if "search" in only:
            blocks["search"] = bench_search(data)
        if "answers" in only:
            blocks["answers"] = bench_answers(data, models)
        if "cold" in only:
            blocks["cold"] = bench_cold_start(data, models[0])
    finally:
        shutil.rmtree(data, ignore_errors=True)
    if "embedders" in only:
        from bench.embedders import bench_embedders
        from bench.scale import corpus_texts

        blocks["embedders"] = bench_embedders(
            Settings(models_path=ROOT / "data" / "models"), corpus_texts(200)
        )
    if "prefill" in only:
        from bench.prefill import bench_prefill

        blocks["prefill"] = bench_prefill(ROOT / "data" / "models", models[0])
    if "floor" in only and args.corpus:
        from bench.floor import bench_floor

        blocks["floor"] = bench_floor(args.corpus, Settings(models_path=ROOT / "data" / "models"))
    if "scale" in only:
        blocks["scale"] = bench_scale(sizes, plot_dir=None if args.quick else ROOT / "docs")
    blocks = {name: lines + [stamp, ""] for name, lines in blocks.items()}
    head = [
        "# Benchmarks",
        "",
        f"On {cpu_model()} ({platform.machine()}), 2 cores, Python {platform.python_version()}, CPU only. Each section "
        "says when and with which command it was measured (`python -m bench --only SECTION` measures "
        "one again and keeps the rest). One run per section; medians and ratios are within that run.",
        "",
    ]
    print(write_sections(out, blocks, head))


if __name__ == "__main__":
    main()
