"""`citewise fetch openreview VENUE_ID` and `citewise fetch arxiv QUERY`: thin verbs over
rag/fetch, with a progress bar and one clear line when a fetch cannot go on."""

from __future__ import annotations

from pathlib import Path

import typer

from rag.clikit import fail as _fail

fetch_app = typer.Typer(
    no_args_is_help=True, help="Bring papers in from OpenReview or arXiv (a JSONL for ingest)."
)


def _fetch(source: str, query: dict, out: Path, run) -> None:
    """Run a fetch into `out` with a progress bar; one clear line when it cannot go on."""
    from tqdm import tqdm

    from rag.fetch.http import FetchError
    from rag.fetch.output import Output

    try:
        target = Output(out, query)
        bar = tqdm(desc=f"fetching from {source}", unit="paper", total=target.total)

        def progress(done: int, total: int | None) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        written = run(target, progress)
        bar.close()
    except FetchError as exc:
        _fail(str(exc))
    typer.echo(f"{written} papers in {out}; next: citewise ingest {out}")


@fetch_app.command("openreview")
def fetch_openreview(
    venue: str = typer.Argument(..., help="The venue id, e.g. ICLR.cc/2025/Conference."),
    out: Path = typer.Option(..., "--out", "-o", help="The JSONL to write (resumed if a fetch stopped)."),
    api: str = typer.Option("https://api2.openreview.net", "--api", help="The OpenReview API (v2) to ask."),
) -> None:
    """Every submission of an OpenReview venue: title, abstract, authors, decision, area, keywords."""
    from rag.fetch import openreview
    from rag.fetch.http import Polite

    http = Polite(api, interval=openreview.INTERVAL)
    _fetch("OpenReview", {"openreview": venue}, out, lambda o, p: openreview.fetch(venue, o, http, p))


@fetch_app.command("arxiv")
def fetch_arxiv(
    query: str = typer.Argument(
        ..., help='A category ("cs.LG") or an arXiv search ("ti:diffusion AND cat:cs.CV").'
    ),
    out: Path = typer.Option(..., "--out", "-o", help="The JSONL to write (resumed if a fetch stopped)."),
    since: str = typer.Option(None, "--since", help="Submitted on or after YYYY-MM-DD."),
    until: str = typer.Option(None, "--until", help="Submitted on or before YYYY-MM-DD."),
    limit: int = typer.Option(None, "--max", min=1, help="At most this many papers."),
    api: str = typer.Option("https://export.arxiv.org", "--api", help="The arXiv API to ask."),
) -> None:
    """Papers of an arXiv category or search, within submission dates (3 s between requests)."""
    from datetime import date

    from rag.fetch import arxiv
    from rag.fetch.http import Polite

    try:
        start, end = (date.fromisoformat(d) if d else None for d in (since, until))
    except ValueError:
        _fail("--since and --until are dates like 2025-01-31")
    http = Polite(api, interval=arxiv.INTERVAL)
    query_key = {"arxiv": query, "since": since, "until": until, "max": limit}
    _fetch(
        "arXiv",
        query_key,
        out,
        lambda o, p: arxiv.fetch(query, o, http, since=start, until=end, limit=limit, progress=p),
    )
