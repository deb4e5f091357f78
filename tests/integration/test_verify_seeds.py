"""`citewise verify` and the claim benchmark on the real seed index with the real embedder."""

import json

import pytest
from typer.testing import CliRunner

from eval.verifier import FALSE_KINDS, load_handwritten, run
from rag.answer.pipeline import Pipeline
from rag.cli import app

pytestmark = pytest.mark.integration


def test_verify_cli_on_the_seed_index(seed_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_DATA_DIR", str(seed_dir))
    runner = CliRunner()
    claims = tmp_path / "c.jsonl"
    claims.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "true", "claim": "RRM raises Reward-Bench accuracy from 80.61% to 84.15%."},
                {"id": "number", "claim": "RRM raises Reward-Bench accuracy from 80.61% to 86.15%.", "paper_id": "88AS5MQnmC"},
                {"id": "negated", "claim": "Knowledge entropy does not decline as pretraining advances."},
                {"id": "name", "claim": "TEAL reaches 40-50% sparsity on Llama-2, Llama-3 and Gemma.", "paper_id": "dGVZwyq5tV"},
            ]
        )
    )  # fmt: skip
    out = runner.invoke(app, ["verify", "--claims", str(claims), "--json"])
    assert out.exit_code == 0, out.output
    # Other tests' servers may print while closing; the report is the JSON object.
    got = {r["id"]: r for r in json.loads(out.stdout[out.stdout.index("{") :])["results"]}
    assert got["true"]["supported"] and got["true"]["paper_id"] == "88AS5MQnmC"  # found by search
    assert not got["number"]["supported"] and "86.15" in got["number"]["reason"]
    assert not got["negated"]["supported"] and got["negated"]["paper_id"] == "eHehzSDUFp"
    assert not got["name"]["supported"] and "Gemma" in got["name"]["reason"]


def test_handwritten_claims_meet_the_acceptance_floor(seed_settings):
    pipeline = Pipeline(seed_settings)
    claims = load_handwritten()  # dev (used to build the checks) and test (written after)
    papers = pipeline.store.papers(sorted({c.paper_id for c in claims}))
    table = run(claims, papers, pipeline.embedder, pipeline.trust)["checkers"]["citewise"]
    assert table["hand-written dev/paraphrase"]["supported"] >= 0.9
    for kind in FALSE_KINDS:
        assert 1 - table[f"hand-written dev/{kind}"]["supported"] >= 0.9, kind


def test_the_sentence_decision_on_real_answer_sentences(seed_settings):
    # The real embedder and the shipped decision, in an answer's check stage (no model needed).
    from rag.answer.trust import check_answer
    from rag.question import read as parse
    from rag.search.evidence import evidence_for

    pipeline = Pipeline(seed_settings)
    paper = pipeline.store.papers(["88AS5MQnmC"])["88AS5MQnmC"]
    ev = [evidence_for(paper, pipeline.embedder, 1)]

    def check(draft: str, question: str = "What does RRM improve?"):
        return check_answer(draft, ev, pipeline.embedder, pipeline.trust, parse(question))

    right = check("RRM raises Reward-Bench accuracy from 80.61% to 84.15% [1].")
    assert right.sentences and not right.removed
    wrong = check("RRM raises Reward-Bench accuracy from 80.61% to 91.15% [1].")
    assert not wrong.sentences and wrong.removed[0].checks[0].name == "decision"
    assert "not kept" in wrong.removed[0].why_not and "91.15" in wrong.removed[0].why_not
    # "two" is the question's: the answer naming the two DPO benchmarks is not held to a 2.
    two = check(
        "The two benchmarks are MT-Bench and AlpacaEval-2 [1].", "Which two benchmarks show the DPO gains?"
    )
    assert two.sentences and not two.removed
