"""`citewise eval`, registered into the CLI by the `citewise.commands` entry point."""

from __future__ import annotations

import functools
from pathlib import Path

import typer

from eval.gold import DEFAULT_GOLD
from rag.clikit import fail as _fail
from rag.clikit import quiet_libraries as _quiet_libraries
from rag.clikit import settings_from as _settings


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)


def evaluate(
    gold: list[Path] = typer.Option(
        None, "--gold", help="Gold JSONL file or folder (default: the seed regression set, eval/gold/seeds/)."
    ),
    config: list[str] = typer.Option(
        None, "--config", "-c", help="Config name; repeat for a side-by-side run."
    ),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N gold items."),
    types: list[str] = typer.Option(None, "--type", help="Only items of this type (repeatable)."),
    retrieval_only: bool = typer.Option(False, "--retrieval-only", help="Score retrieval only (no LLM)."),
    out: Path = typer.Option(None, "--out", help="Report folder (default: reports/<timestamp>)."),
    compare: tuple[Path, Path] | None = typer.Option(
        None, "--compare", help="Two report folders: what changed."
    ),
    list_configs: bool = typer.Option(False, "--list", help="List the configs and exit."),
    verifier: bool = typer.Option(False, "--verifier", help="Run the claim-check benchmark instead."),
    offered: bool = typer.Option(
        False,
        "--offered",
        help="Without generating: the facts and prompt tokens each config offers the model.",
    ),
    split: str = typer.Option(
        None,
        "--split",
        help="dev-a, dev-b, dev (both halves) or test (sealed, run once): that split of the real-conference "
        "gold set (eval/gold/conference/<split>.jsonl and survey-<split>.jsonl); the index must hold the "
        "conference.",
    ),
    halves: bool = typer.Option(
        False, "--halves", help="Also print dev-a and dev-b side by side with the gap (eval/halves.py)."
    ),
    rescore: Path = typer.Option(
        None, "--rescore", help="A report folder: score its stored answers again with today's metrics."
    ),
    replay: Path = typer.Option(
        None, "--replay", help="A report folder: judge its stored drafts again instead of generating."
    ),
    ablation: bool = typer.Option(
        False, "--ablation", help="Also judge every draft with each check and rule off in turn."
    ),
    model: str = typer.Option(None, "--model", help="Shipped model to answer with (default: RAG_MODEL)."),
    resume: bool = typer.Option(
        False, "--resume", help="Keep the items a stopped run already scored in --out; run the rest."
    ),
    share_drafts: bool = typer.Option(
        False,
        "--share-drafts",
        help="Configs that send the same prompt share one draft (temperature 0): the selector beside the rule "
        "chain in one run at the cost of one generation (eval/shared.py).",
    ),
    distractors: list[int] = typer.Option(
        None,
        "--distractors",
        min=0,
        help="Also put the seeds among N generated distractor abstracts (repeat: 0 1000 10000).",
    ),
) -> None:
    """Score retrieval, answers, citations and refusals on gold Q&A; write a report with plots."""
    from eval.configs import CONFIGS, DEFAULT_CONFIGS

    if list_configs:
        for name, c in CONFIGS.items():
            typer.echo(f"{name:12} {'(default) ' if name in DEFAULT_CONFIGS else ''}{c.description}")
        return
    if compare:
        from eval.report import compare as compare_reports

        missing = [p for p in compare if not (p / "summary.json").is_file()]
        if missing:
            _fail(f"no summary.json in {', '.join(map(str, missing))}")
        typer.echo("\n".join(compare_reports(*compare)))
        return

    if resume and out is None:
        _fail("--resume needs the --out folder of the stopped run")
    if split:
        from eval.halves import gold_files

        if gold:
            _fail("give --split or --gold, not both")
        try:
            gold = gold_files(split)
        except ValueError as exc:
            _fail(str(exc))
    from tqdm import tqdm

    from eval.gold import GoldError
    from eval.harness import evaluate as run_eval
    from rag.answer.pipeline import Pipeline
    from rag.index.store import StoreError
    from rag.llm import LLMError

    _quiet_libraries()

    def progress(items, name):
        return tqdm(items, desc=name, unit="q")

    if rescore is not None:
        from eval.gold import GoldError, load_gold
        from eval.report import HEADLINE, table
        from eval.rescore import rescore as run_rescore

        if not (rescore / "results.jsonl").is_file():
            _fail(f"no results.jsonl in {rescore}")
        try:
            folder, summary = run_rescore(rescore, load_gold(gold or [DEFAULT_GOLD]))
        except (GoldError, ValueError) as exc:
            _fail(str(exc))
        typer.echo("\n".join(table(summary["configs"], HEADLINE)))
        _print_halves(folder, halves)
        typer.echo(f"\nreport: {folder / 'report.md'}")
        return
    if verifier:
        from datetime import datetime

        from eval.verifier import benchmark

        folder = out or Path("reports") / f"verifier-{datetime.now():%Y%m%d-%H%M%S}"
        try:
            result = benchmark(Pipeline(_settings()), folder)
        except (StoreError, ValueError, OSError) as exc:
            _fail(str(exc))
        from eval.verifier import render

        typer.echo("\n".join(render(result)))
        typer.echo(f"\nreport: {folder / 'verifier.md'}")
        return
    if offered:
        from eval.harness import load_checked
        from eval.offered import measure, table

        try:
            settings = _settings()
            pipeline = Pipeline(settings.model_copy(update={"model": model or settings.model}))
            items = [
                i for i in load_checked(gold or [DEFAULT_GOLD], pipeline) if not types or i.type in types
            ]
            offers = measure(
                pipeline, items[:limit], config or ["hybrid"], sorted(set(distractors or [0])), progress
            )
        except (GoldError, KeyError, ValueError, StoreError, LLMError) as exc:
            _fail(str(exc).strip("'\""))
        typer.echo("\n".join(table(offers)))
        return
    try:
        settings = _settings()
        settings = settings.model_copy(update={"model": model or settings.model})
        llm = None
        if replay is not None:
            from eval.replay import ReplayLLM

            if not (replay / "results.jsonl").is_file():
                _fail(f"no results.jsonl in {replay}")
            # A confirmation no stored run has is asked of the settings' model.
            try:
                llm = ReplayLLM(replay, live=functools.cache(lambda: Pipeline(settings).llm()))
            except ValueError as exc:
                _fail(str(exc))
        if share_drafts and llm is None:
            from eval.shared import SharedDrafts

            llm = SharedDrafts(Pipeline(settings).llm())
        folder, summary = run_eval(
            Pipeline(settings, llm=llm),
            gold=gold or [],
            configs=config or [],
            limit=limit,
            types=types or [],
            retrieval_only=retrieval_only,
            out=out,
            ablation=ablation,
            only=getattr(llm, "items", None),  # a replay judges the stored items only
            progress=progress,
            distractors=sorted(set(distractors or [])),
            resume=resume,
            fixed_order=share_drafts,
        )
    except (GoldError, KeyError, StoreError, LLMError) as exc:
        _fail(str(exc).strip("'\""))
    from eval.report import HEADLINE, table

    typer.echo("\n".join(table(summary["configs"], HEADLINE)))
    _print_halves(folder, halves)
    typer.echo(f"\nreport: {folder / 'report.md'}")


def _print_halves(folder: Path, wanted: bool) -> None:
    """dev-a beside dev-b for the run in `folder`; also written to its `halves.md`."""
    if not wanted:
        return
    from eval.gold import read_jsonl
    from eval.halves import half_of, side_by_side
    from eval.runner import ItemResult

    results = [ItemResult(**row) for row in read_jsonl(folder / "results.jsonl")]
    lines = side_by_side(results, half_of())
    (folder / "halves.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    typer.echo("\n" + "\n".join(lines))
