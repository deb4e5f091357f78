"""The thin CLI, driven by typer's runner against a real Chroma and the real embedder."""

import json

import pytest
from typer.testing import CliRunner

from rag.cli import app
from tests.conftest import ROOT, write_jsonl

runner = CliRunner()
pytestmark = pytest.mark.integration  # the real embedding model


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAG_MODELS_PATH", str(ROOT / "data" / "models"))  # built by make install
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(
        folder / "p.jsonl",
        [
            {
                "id": "A1",
                "title": "Bird sounds",
                "url": "https://x/a1",
                "abstract": "We release a large dataset of bird song recordings for audio classification.",
            },
            {
                "id": "B2",
                "title": "Binary LLMs",
                "abstract": "We compress language model weights below one bit.",
            },
        ],
    )
    (folder / "broken.jsonl").write_text("{oops\n")
    return folder


def test_ingest_search_and_reingest(env):
    result = runner.invoke(app, ["ingest", str(env), "-q"])
    assert result.exit_code == 0, result.output
    assert "papers: 2" in result.output and "broken.jsonl:1" in result.output
    again = runner.invoke(app, ["ingest", str(env), "-q"])
    assert "chunks embedded: 0" in again.output and "up to date" in again.output

    out = runner.invoke(app, ["search", "bird audio dataset", "--k", "2", "--json"])
    data = json.loads(out.stdout)
    assert data["query"] == "bird audio dataset"
    top = data["results"][0]
    assert (top["rank"], top["paper_id"], top["title"], top["url"]) == (
        1,
        "A1",
        "Bird sounds",
        "https://x/a1",
    )
    assert top["sources"] == ["p.jsonl#0"] and top["chunk_text"].startswith("We release")

    plain = runner.invoke(app, ["search", "bird audio dataset"])
    assert plain.output.startswith("1. Bird sounds")


def test_ask_refuses_offtopic_and_rejects_empty(env):
    runner.invoke(app, ["ingest", str(env), "-q"])
    out = runner.invoke(app, ["ask", "What is the capital of France?", "--json"])
    data = json.loads(out.stdout)
    # No rule refuses before the model writes: the selector refuses after, and says why.
    assert data["abstained"] and data["retrieved"] and data["abstain_code"] == "selected_refusal"
    assert data["selected"]["decision"]["outcome"] == "refuse" and data["selected"]["decision"]["why"]
    assert any(t["stage"] == "select" and t["decision"] == "refused" for t in data["trace"])
    bad = runner.invoke(app, ["ask", "   "])
    assert bad.exit_code == 1 and "Please type a question" in bad.output


def test_search_on_empty_index_is_a_clear_error(env):
    out = runner.invoke(app, ["search", "anything"])
    assert out.exit_code == 1 and "citewise ingest" in out.output


def test_help_is_fast_and_lists_commands():
    out = runner.invoke(app, ["--help"])
    for verb in ("ingest", "search", "ask", "chat", "models"):
        assert verb in out.output


def test_env_example_lists_every_setting():
    from rag.settings import Settings, env_example
    from tests.conftest import ROOT

    text = (ROOT / ".env.example").read_text()
    assert text == env_example(), "run: python -m rag.settings > .env.example"
    missing = [n for n in Settings.model_fields if f"RAG_{n.upper()}" not in text]
    assert not missing, f".env.example lacks {missing}"


def test_verify_one_claim_and_a_claims_file_with_bad_lines(env, tmp_path):
    assert runner.invoke(app, ["ingest", str(env), "-q"]).exit_code == 0
    ok = runner.invoke(
        app, ["verify", "We release a large dataset of bird song recordings.", "--json", "--no-verdict"]
    )
    assert ok.exit_code == 0, ok.output
    result = json.loads(ok.stdout)["results"][0]
    assert result["supported"] is True and result["paper_id"] == "A1"
    assert result["passage"].startswith("We release")

    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        '{"id": "c1", "claim": "We compress language model weights below 3 bits.", "paper_id": "B2"}\n'
        "{not json\n"
        '{"id": "c3", "claim": "Bird song recordings are released.", "paper_id": "ZZ"}\n'
        '{"id": "c4", "claim": "We do not compress language model weights.", "paper_id": "B2"}\n'
    )
    out = runner.invoke(app, ["verify", "--claims", str(claims), "--jsonl", "--no-verdict"])
    assert out.exit_code == 1  # some lines were bad; the others were still judged
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    by_id = {r["id"]: r for r in rows}
    assert by_id["c1"]["supported"] is False and "3" in by_id["c1"]["reason"]
    assert by_id["c4"]["supported"] is False and "negates" in by_id["c4"]["reason"]
    assert "claims.jsonl:2" in by_id["line-2"]["error"] and "malformed JSON" in by_id["line-2"]["error"]
    assert "unknown paper id 'ZZ'" in by_id["c3"]["error"]
    assert "claims.jsonl:2: malformed JSON" in out.stderr

    missing = runner.invoke(app, ["verify", "--claims", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 1 and "no such file" in missing.output
    neither = runner.invoke(app, ["verify"])
    assert neither.exit_code == 1 and "give one claim" in neither.output


def test_filters_and_bibtex_from_the_command_line(env):
    from pathlib import Path

    import bibtexparser

    formats = Path(__file__).parent / "data" / "formats"
    assert runner.invoke(app, ["ingest", str(formats), "-q"]).exit_code == 0
    out = runner.invoke(app, ["search", "sparse routers graphs notes", "--filter", "status=oral", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["paper_id"] for r in json.loads(out.stdout)["results"]] == ["abc123XYZ"]
    either = runner.invoke(app, ["search", "routers graphs", "--filter", "status=oral", "--filter",
                                 "status=poster", "--filter", "year=2025", "--json"])  # fmt: skip
    assert {r["paper_id"] for r in json.loads(either.stdout)["results"]} == {"abc123XYZ", "def456UVW"}
    none = runner.invoke(app, ["search", "routers", "--filter", "venue=ICML 1999"])
    assert none.exit_code == 0 and "No paper matches the filters (venue: icml 1999)" in none.output
    bad = runner.invoke(app, ["search", "routers", "--filter", "colour=red"])
    assert (
        bad.exit_code == 1 and "unknown filter key 'colour'" in bad.output and "Traceback" not in bad.output
    )

    bib = runner.invoke(app, ["bibtex", "abc123XYZ", "arXiv:2405.01234", "abc123XYZ"])
    assert bib.exit_code == 0, bib.output
    library = bibtexparser.parse_string(bib.stdout)
    assert not library.failed_blocks and len(library.entries) == 2
    first = library.entries[0]
    assert first["booktitle"] == "ICLR 2025" and first["year"] == "2025" and "Lovelace" in first["author"]
    assert library.entries[1].entry_type == "article" and library.entries[1]["url"].endswith("2405.01234")
    missing = runner.invoke(app, ["bibtex", "nope"])
    assert missing.exit_code == 1 and "not in the index: nope" in missing.output


def test_ask_in_markdown_for_notes(env):
    assert runner.invoke(app, ["ingest", str(env), "-q"]).exit_code == 0
    out = runner.invoke(app, ["ask", "What is the boiling point of tungsten?", "--format", "markdown"])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("**Q:** What is the boiling point of tungsten?")
    assert "**References**" not in out.stdout  # a refusal cites nothing
    bad = runner.invoke(app, ["ask", "anything", "--format", "pdf"])
    assert bad.exit_code == 1 and "--format is text or markdown" in bad.output


def test_ingest_leaves_the_keyword_index_in_step_for_the_first_search(env, tmp_path):
    from rag.index.embedding import embedder_from_settings
    from rag.index.store import store_from_settings
    from rag.settings import Settings

    assert runner.invoke(app, ["ingest", str(env), "-q"]).exit_code == 0
    settings = Settings()
    store = store_from_settings(settings, embedder_from_settings(settings))
    added = []
    assert store.keyword_index(progress=lambda done, total: added.append(done)).size == store.count()
    assert added == []  # nothing left for the first search to index

    empty = tmp_path / "empty"
    empty.mkdir()
    other = runner.invoke(app, ["ingest", str(empty), "-q"], env={"RAG_DATA_DIR": str(tmp_path / "d2")})
    assert other.exit_code == 0, other.output  # nothing ingested: no keyword index asked for


def test_similar_lists_the_other_papers_and_refuses_an_unknown_id_in_one_line(env):
    assert runner.invoke(app, ["ingest", str(env), "-q"]).exit_code == 0
    out = runner.invoke(app, ["similar", "A1", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["paper_id"] == "A1" and [s["paper_id"] for s in data["similar"]] == ["B2"]
    assert data["similar"][0]["sentence"] == "We compress language model weights below one bit."
    bad = runner.invoke(app, ["similar", "nope"])
    assert bad.exit_code == 1 and "No paper with id 'nope'" in bad.output and "Traceback" not in bad.output


def test_map_after_ingest_writes_a_picture_and_an_offline_page(env, tmp_path):
    empty = runner.invoke(app, ["map", "-q"])
    assert empty.exit_code == 1 and "citewise ingest" in empty.output and "Traceback" not in empty.output
    assert runner.invoke(app, ["ingest", str(env), "-q"]).exit_code == 0
    kept = tmp_path / "data" / "map" / "citewise" / "map.json"
    assert kept.exists()  # laid out by the ingest
    stamp = kept.stat().st_mtime_ns
    out = runner.invoke(app, ["map", "-q", "--out", str(tmp_path / "out")])
    assert out.exit_code == 0, out.output
    assert kept.stat().st_mtime_ns == stamp  # current: not laid out again
    assert "2 papers" in out.output and "works offline" in out.output
    png, page = tmp_path / "out" / "map.png", tmp_path / "out" / "map.html"
    assert png.read_bytes()[:4] == b"\x89PNG" and "Bird sounds" in page.read_text()
