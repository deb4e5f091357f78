"""`citewise map`, registered into the CLI by the `citewise.commands` entry point; and the step
of `citewise ingest` that lays the map out again when the papers changed."""

from __future__ import annotations

from pathlib import Path

import typer

from rag.clikit import quiet_libraries as _quiet_libraries
from rag.clikit import settings_from as _settings

STEPS = ("reading vectors", "laying out", "clustering", "naming")


def register(app: typer.Typer) -> None:
    app.command("map")(map_command)


def build_with_bar(folder: Path, store, quiet: bool, rebuild: bool = False):
    """The store's map, built (with a bar over its steps) unless a current one is kept."""
    from tqdm import tqdm

    from rag.map.build import build_map, current_map

    kept = None if rebuild else current_map(folder, store)
    if kept is not None:
        return kept
    with tqdm(total=len(STEPS), desc="map", unit="step", disable=quiet) as bar:

        def step(name: str) -> None:
            bar.set_postfix_str(name)
            bar.update(STEPS.index(name) - bar.n if name in STEPS else 0)

        built = build_map(folder, store, step)
        bar.update(len(STEPS) - bar.n)
    return built


def map_command(
    out: Path = typer.Option(
        None, "--out", help="Folder for map.png and map.html (default: where the map is kept)."
    ),
    title: str = typer.Option(None, help="Title of the picture and the page (default: the papers' venue)."),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Lay out and name again even if the kept map is current."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Lay out and name the indexed papers' topics; write the map as a picture and an offline page."""
    from rag.index.embedding import embedder_from_settings
    from rag.index.store import StoreError, store_from_settings
    from rag.map.build import map_folder
    from rag.map.render import write_html, write_png

    _quiet_libraries()
    settings = _settings()
    try:
        store = store_from_settings(settings, embedder_from_settings(settings))
        folder = map_folder(settings, store)
        conference_map = build_with_bar(folder, store, quiet, rebuild)
    except StoreError as exc:
        typer.secho(str(exc), fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from None
    name = title or conference_map.info.get("venue") or "citewise map"
    target = out or folder
    png = write_png(conference_map, target / "map.png", name)
    html = write_html(conference_map, target / "map.html", name)
    info = conference_map.info
    typer.echo(f"{info.get('papers')} papers, {info.get('topics')} topics, {info.get('themes')} themes "
               f"(laid out in {conference_map.seconds:.0f} s)")  # fmt: skip
    for topic in sorted(conference_map.topics, key=lambda t: -t.size)[:10]:
        typer.echo(f"  {topic.size:6d}  {topic.name}")
    typer.echo(f"picture: {png}\npage:    {html} (works offline)")
