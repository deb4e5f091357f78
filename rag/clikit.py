"""What every command shares: settings from flags, one-line errors, quiet libraries. Imported by
the commands in rag/, ui/ and eval/ alike."""

from __future__ import annotations

import logging
import os
import sys

import typer

from rag.settings import Settings


def settings_from(**overrides) -> Settings:
    """The settings of a command, checked at start-up: a wrong value or an unknown check or rule
    name is one line of error, not a traceback at the first answer."""
    from pydantic import ValidationError

    from rag.answer.trust import Trust, UnknownName

    try:
        settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
        Trust(settings.trust)
    except UnknownName as exc:
        fail(str(exc))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"invalid settings (RAG_* variables or .env): {problems}")
    return settings


def fail(message: str, code: int = 1) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def quiet_libraries() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    for name in ("httpx", "chromadb", "sentence_transformers", "transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # Read by transformers when (if) it is imported: importing it here only to silence it cost
    # half a second of every cold command, including those that never load it.
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


def keyword_index_with_bar(store, quiet: bool) -> None:
    """Bring the keyword index in step now, with a bar, so the first search does not pay for it
    (about 12 s for the whole conference) without a word."""
    from tqdm import tqdm

    bar = None

    def tick(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc="keyword index", unit="chunk", disable=quiet)
        bar.update(done - bar.n)

    if not store.exists():  # nothing was ingested: there is nothing to index
        return
    try:
        store.keyword_index(progress=tick)
    finally:
        if bar is not None:
            bar.close()


def print_list(sentence: str, hits, themes=()) -> None:
    """Every paper of a survey answer, grouped by theme when the map has them: rank, title,
    status, the sentence that shows it fits."""
    typer.secho(sentence, bold=True)
    for name, group in [(t.name, t.hits) for t in themes] or [("", hits)]:
        if name:
            typer.secho(f"\n  {name} ({len(group)})", bold=True)
        for h in group:
            status = f" ({h.paper.status})" if h.paper.status else ""
            typer.echo(f"  {h.rank}. {h.paper.display_title}{status} {h.paper.url}".rstrip())
            typer.echo(f"      “{h.sentence}”")
    typer.echo("")
