"""`citewise`: one thin command per verb. Heavy libraries are imported inside the commands so
`citewise --help` answers at once."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import typer

from rag.clikit import fail as _fail
from rag.clikit import keyword_index_with_bar, print_list
from rag.clikit import quiet_libraries as _quiet_libraries
from rag.clikit import settings_from as _settings
from rag.text import plain

FILTER_OPTION = typer.Option(
    None,
    "--filter",
    help="KEY=VALUE with KEY venue, year or status (repeat; several values of one key = any of them).",
)


def _filters(items: list[str] | None):
    from rag.filters import FilterError, parse

    try:
        return parse(items or [])
    except FilterError as exc:
        _fail(str(exc))


app = typer.Typer(add_completion=False, no_args_is_help=True, help="Ask ICLR abstracts, get cited answers.")


@app.command()
def ingest(
    paths: list[Path] = typer.Argument(None, help="Files or folders (default: seeds/)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Re-embed everything from scratch."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Read, deduplicate, chunk and embed papers into the index (only what changed)."""
    from tqdm import tqdm

    from rag.index.embedding import embedder_from_settings
    from rag.index.ingest import ingest as run_ingest
    from rag.index.ingest import ingest_lock
    from rag.index.sentence_vectors import sentence_vectors_from_settings
    from rag.index.store import StoreError, store_from_settings
    from rag.map.build import map_folder
    from rag.map.cli import build_with_bar

    _quiet_libraries()
    settings = _settings()
    paths = paths or [Path("seeds")]

    def progress(items, total):
        return tqdm(items, total=total, desc="embedding papers", unit="paper", disable=quiet or total == 0)

    try:
        embedder = embedder_from_settings(settings)
        store = store_from_settings(settings, embedder)
        with ingest_lock(settings.data_dir):
            summary = run_ingest(
                paths,
                store,
                embedder,
                chunk_tokens=settings.chunk_tokens,
                rebuild=rebuild,
                progress=progress,
                sentences=sentence_vectors_from_settings(settings, embedder),
            )
            keyword_index_with_bar(store, quiet)
            if settings.map.after_ingest and store.count():  # again only when the papers changed
                build_with_bar(map_folder(settings, store), store, quiet)
    except (StoreError, RuntimeError) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted; the index keeps everything stored before the interruption", 130)
    for err in summary.errors:
        typer.secho(f"skipped {err}", fg=typer.colors.YELLOW, err=True)
    for line in summary.lines():
        typer.echo(line)


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(5, "--k", "-k", min=1, max=50, help="Papers to return."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    mode: str = typer.Option(None, help="rrf (hybrid), dense or bm25."),
    filter_: list[str] = FILTER_OPTION,
) -> None:
    """Hybrid (dense + BM25 + rare names) search over the indexed papers."""
    from rag.answer.pipeline import Pipeline
    from rag.filters import describe
    from rag.index.store import StoreError
    from rag.question import read

    _quiet_libraries()
    filters = _filters(filter_)
    pipeline = Pipeline(_settings(fusion=mode))
    try:
        results = pipeline.search(query, k, filters=filters, alternatives=read(query).alternatives)
    except (StoreError, ValueError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(
            json.dumps(
                {"query": query, "results": [r.to_json() for r in results]}, indent=2, ensure_ascii=False
            )
        )
        return
    if not results:
        typer.echo(
            f"No paper matches the filters ({describe(filters)})."
            if filters
            else "No results: is the index empty? Run `citewise ingest`."
        )
    for r in results:
        typer.secho(f"{r.rank}. {r.paper.display_title}", bold=True)
        typer.echo(f"   {r.paper.id}  score {r.score:.4f}  similarity {r.relevance:.2f}  {r.paper.url}")
        typer.echo(f"   {r.best.chunk.text[:240]}{'…' if len(r.best.chunk.text) > 240 else ''}")
        typer.echo(f"   from: {', '.join(r.paper.sources)}")


@app.command()
def ask(
    question: str = typer.Argument(..., help="Your question."),
    k: int = typer.Option(None, "--k", "-k", min=1, max=10, help="Papers used as sources."),
    backend: str = typer.Option(None, help="auto, ollama, llamacpp or openai."),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer as JSON."),
    no_stream: bool = typer.Option(False, "--no-stream", help="Print the answer when complete."),
    filter_: list[str] = FILTER_OPTION,
    output: str = typer.Option(
        "text",
        "--format",
        help="text, or markdown: the answer with numbered references, to paste into notes.",
    ),
    near_misses: bool = typer.Option(
        False,
        "--near-misses",
        help="After a list of papers, the papers it cut: they hold the topic's words "
        "but the judge read them as not about it.",
    ),
) -> None:
    """Answer a question from the indexed papers, with citations."""
    from rag.answer.citations import draft_preview
    from rag.answer.pipeline import AnswerEvent, InputError, Pipeline, PreviewEvent, SurveyEvent, TokenEvent
    from rag.index.store import StoreError
    from rag.llm import LLMError

    _quiet_libraries()
    if output not in ("text", "markdown"):
        _fail("--format is text or markdown")
    filters = _filters(filter_)
    pipeline = Pipeline(_settings(llm_backend=backend))
    stream = not (as_json or no_stream or output == "markdown")
    answer, drafting, draft, printed = None, False, "", ""
    try:
        for event in pipeline.stream(question, k=k, filters=filters):
            if isinstance(event, SurveyEvent) and stream:
                print_list(event.sentence, event.hits, event.themes)
            if isinstance(event, PreviewEvent) and stream:
                typer.secho("Evidence (the best sentence of each source, while the model writes):", bold=True)
                for ev, sentence in event.best():
                    typer.echo(f"  [{ev.number}] {ev.paper.display_title}\n      “{sentence}”")
                typer.echo("")
            if isinstance(event, TokenEvent) and stream:
                if not drafting:
                    typer.secho("Draft (being checked against the sources):", dim=True)
                    drafting = True
                draft += event.text
                visible = draft_preview(draft)
                typer.secho(visible[len(printed) :], nl=False, dim=True)
                printed = visible
            elif isinstance(event, AnswerEvent):
                answer = event.answer
    except (InputError, StoreError, LLMError) as exc:
        _fail(str(exc))
    assert answer is not None
    if as_json:
        typer.echo(json.dumps(answer.to_json(), indent=2, ensure_ascii=False))
        return
    if output == "markdown":
        from rag.export import markdown

        typer.echo(markdown(answer), nl=False)
        return
    if answer.listing and not stream:
        print_list(answer.listing, answer.papers, answer.themes)
    if near_misses and answer.near_misses:
        print_list(
            f"Cut as not about “{answer.intent.topic}” ({len(answer.near_misses)}):", answer.near_misses
        )
    if drafting:
        typer.echo("\n")
        typer.secho("Checked answer:", bold=True)
    typer.echo(answer.text)
    doubted = [s for s in answer.sentences if s.doubted]
    if doubted:
        typer.secho(f"\nNot confirmed by the cited source ({len(doubted)}):", fg=typer.colors.YELLOW)
        for s in doubted:
            typer.echo(f"  - {s.text}  ({s.doubted})")
    if answer.removed:
        typer.secho(f"\nNot found in the sources ({len(answer.removed)}):", fg=typer.colors.YELLOW)
        for s in answer.removed:
            failed = s.why_not or "no source backs it"
            typer.echo(f"  - {s.text}  ({failed})")
    if answer.error:
        typer.secho(f"\nThe model failed: {answer.error}", fg=typer.colors.RED, err=True)
    typer.echo("")
    if answer.citations:
        typer.secho("Sources:", bold=True)
        for c in answer.citations:
            typer.echo(f"[{c.number}] {c.title} {c.url}".rstrip())
            typer.echo(f'    "{plain(c.passage)}"  ({", ".join(c.sources)})')
    elif answer.retrieved:
        typer.secho("Closest papers:", bold=True)
        for r in answer.retrieved:
            typer.echo(f"- {r.paper.display_title} {r.paper.url}".rstrip())
    t = answer.timings
    first = f"{t.first_token:.1f}s" if t.first_token is not None else "-"
    typer.echo(
        f"\n[{answer.backend or 'no LLM'}:{answer.model}] sources {t.retrieval:.2f}s, first token {first}, total {t.total:.1f}s"
    )


@app.command()
def bibtex(
    ids: list[str] = typer.Argument(..., help="Paper ids (as `citewise search --json` shows them)."),
) -> None:
    """Print a BibTeX entry for each paper (key, title, authors, venue, year, URL)."""
    from rag.answer.pipeline import Pipeline
    from rag.export import bibtex as to_bibtex
    from rag.index.store import StoreError

    _quiet_libraries()
    try:
        papers = Pipeline(_settings()).store.papers(list(dict.fromkeys(ids)))
    except StoreError as exc:
        _fail(str(exc))
    missing = [i for i in ids if i not in papers]
    if missing:
        _fail(f"not in the index: {', '.join(missing)}")
    typer.echo(to_bibtex(papers[i] for i in dict.fromkeys(ids)), nl=False)


@app.command()
def verify(
    claim: str = typer.Argument(None, help="A claim to check (or use --claims FILE)."),
    paper: str = typer.Option(None, "--paper", help="Paper id to check against (default: best match)."),
    claims_file: Path = typer.Option(None, "--claims", help='JSONL file of {"id", "claim", "paper_id"?}.'),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object {"results": [...]}.'),
    as_jsonl: bool = typer.Option(False, "--jsonl", help="Print one JSON line per claim."),
    verdict: bool = typer.Option(
        True,
        "--verdict/--no-verdict",
        help="After the rule checks pass, ask the model whether the abstract supports, contradicts or "
        "does not address the claim (about 2 s a claim); --no-verdict: the rule checks only.",
    ),
) -> None:
    """Check claims against the indexed abstracts: numbers, names, negations, directions, topic."""
    if (claim is None) == (claims_file is None):
        _fail("give one claim, or --claims FILE")
    from rag.answer.pipeline import Pipeline
    from rag.answer.verify import ClaimInput, ClaimVerifier, read_claims
    from rag.index.store import StoreError

    _quiet_libraries()
    pipeline = Pipeline(_settings())
    entail = None
    if verdict:
        from rag.answer.verdicts import stance

        def entail(text, passage, ev):
            return stance(pipeline.llm(), text, ev.paper.display_title, passage)

    verifier = ClaimVerifier(pipeline.store, pipeline.embedder, pipeline.trust, entail=entail)
    if claims_file is not None:
        if not claims_file.is_file():
            _fail(f"{claims_file}: no such file")
        items = read_claims(claims_file)
    else:
        items = iter([ClaimInput("claim", claim.strip(), paper)])
    results, bad = [], 0
    try:
        for result in verifier.check_all(items):
            if result.error:
                bad += 1
                typer.secho(f"error: {result.error}", fg=typer.colors.RED, err=True)
            if as_jsonl:
                typer.echo(json.dumps(result.to_json(), ensure_ascii=False))
            elif not as_json:
                _print_claim(result)
            results.append(result)
    except (StoreError, OSError, ValueError) as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps({"results": [r.to_json() for r in results]}, indent=2, ensure_ascii=False))
    if bad:
        raise typer.Exit(1)


def _print_claim(result) -> None:
    if result.error:
        return
    mark, color = (
        ("SUPPORTED", typer.colors.GREEN) if result.supported else ("NOT SUPPORTED", typer.colors.RED)
    )
    typer.secho(f"{result.id}: {mark}", fg=color, bold=True, nl=False)
    typer.echo(f" — {result.reason}  [{result.paper_id}]")
    if result.passage:
        typer.echo(f'    closest sentence: "{plain(result.passage)}"')


@app.command()
def similar(
    paper_id: str = typer.Argument(..., help="A paper id, as `citewise search` shows it."),
    k: int = typer.Option(5, "--k", "-k", min=1, max=50, help="Papers to list."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Papers like this one: the nearest papers in the index, each with its sentence nearest it."""
    from rag.answer.pipeline import Pipeline
    from rag.index.store import StoreError
    from rag.search.similar import similar as find_similar

    _quiet_libraries()
    pipeline = Pipeline(_settings())
    try:
        paper, found = find_similar(pipeline.store, pipeline.embedder, pipeline.sentence_vectors, paper_id, k)
    except StoreError as exc:
        _fail(str(exc))
    if as_json:
        payload = {"paper_id": paper.id, "title": paper.title, "similar": [s.to_json() for s in found]}
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    typer.echo(f"Papers like “{paper.title}” ({paper.id}):")
    for rank, s in enumerate(found, 1):
        typer.echo(f"{rank}. {s.paper.title}  ({s.paper.id}, similarity {s.similarity:.2f})")
        typer.echo(f"   “{s.sentence}”")


@app.command()
def models(
    name: str = typer.Argument(
        None, help="qwen1.5b, qwen0.5b or smollm2 (default: RAG_MODEL), or embedder: the ONNX files."
    ),
) -> None:
    """Assemble and verify a shipped GGUF model (done automatically on first use), or build the
    ONNX embedder (fp32 and int8) from the shipped MiniLM weights."""
    from rag.llm import LLMError
    from rag.llm.models import shipped_model_path

    settings = _settings()
    if name == "embedder":
        from rag.index.embedding import onnx_dir
        from rag.index.embedding.choice import keep
        from rag.index.embedding.onnx import export

        _quiet_libraries()
        for path in export(onnx_dir(settings)):
            typer.echo(f"embedder: {path}")
        record = keep(onnx_dir(settings), settings.threads)
        rates = ", ".join(
            f"{name} {rate:.0f} texts/s in batches of {record['batch_size'][name]}"
            for name, rate in record["texts_per_s"].items()
        )
        typer.echo(f"embedder for auto: {record['backend']} ({rates}; {record['cpu']})")
        return
    try:
        path = shipped_model_path(name or settings.model, settings.models_dir)
    except LLMError as exc:
        _fail(str(exc))
    typer.echo(f"{name or settings.model}: {path} (sha256 verified)")


def register_plugins() -> None:
    """Add the commands other packages provide (`chat` from ui, `eval` from eval) through the
    `citewise.commands` entry point group: rag/ never imports ui/ or eval/, which import rag/."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="citewise.commands"):
        try:
            ep.load()(app)
        except ImportError as exc:  # a broken optional package must not break the other commands
            logging.getLogger(__name__).warning("command %s unavailable: %s", ep.name, exc)


register_plugins()


from rag.fetch.cli import fetch_app  # noqa: E402  (the verbs of `citewise fetch`)

app.add_typer(fetch_app, name="fetch")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
