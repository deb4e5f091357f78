"""`citewise chat`, registered into the CLI by the `citewise.commands` entry point."""

from __future__ import annotations

import typer

from rag.clikit import quiet_libraries as _quiet_libraries
from rag.clikit import settings_from as _settings


def register(app: typer.Typer) -> None:
    app.command()(chat)


def chat(
    host: str = typer.Option(None, help="Address to bind (default 127.0.0.1)."),
    port: int = typer.Option(None, help="Port (default 7860)."),
) -> None:
    """Open the chat page in the browser."""
    from ui.app import main

    _quiet_libraries()
    main(_settings(ui_host=host, ui_port=port))
