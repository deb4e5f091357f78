"""Checks and rules are classes chosen by name in the settings: a new one is one class and its
name; an unknown name stops the program at start-up with the names it knows."""

import numpy as np
import pytest
from typer.testing import CliRunner

from rag.answer.trust import (
    CHECKS,
    RULES,
    Claim,
    ClaimCheck,
    Drafted,
    Refusal,
    Rule,
    Source,
    Trust,
    UnknownName,
    check_answer,
)
from rag.cli import app
from rag.question import read as parse
from rag.search.evidence import evidence_for
from rag.settings import Settings, TrustSettings
from rag.types import Check, Paper
from tests.conftest import PAPERS
from tests.fakes import FakeEmbedder


class NoShouting(ClaimCheck, name="toy_no_shouting"):
    """A toy check: a claim in capitals is not backed, whatever its source says."""

    def check(self, claim: Claim, source: Source) -> Check:
        loud = any(w.isupper() and len(w) > 3 for w in claim.text.split())
        return Check(self.name, not loud, "it shouts" if loud else "")


class TooLong(Rule, name="toy_too_long", reason="the answer is longer than the toy allows"):
    def refuse(self, answer: Drafted) -> Refusal | None:
        return Refusal(self.name) if len(answer.draft) > 40 else None


def _knowledge_entropy():
    row = next(p for p in PAPERS if "entropy" in p["title"].lower())
    return [
        evidence_for(Paper(id=row["id"], title=row["title"], abstract=row["abstract"]), FakeEmbedder(), 1)
    ]


def test_a_new_check_is_one_class_and_its_name_in_the_settings():
    assert CHECKS["toy_no_shouting"] is NoShouting
    trust = Trust(TrustSettings(checks=[*TrustSettings().checks, "toy_no_shouting"], support_threshold=0.3))
    evidence, embedder = _knowledge_entropy(), FakeEmbedder()
    quiet = "Knowledge entropy declines as pretraining advances [1]."
    loud = "Knowledge entropy DECLINES as pretraining advances [1]."
    assert check_answer(quiet, evidence, embedder, trust, parse("q")).sentences
    # Its result is one more feature of the sentence decision, and in the sentence's checks; the
    # decision weighs it once it is trained with it (python -m eval.judge.train_sentence).
    shouted = check_answer(loud, evidence, embedder, trust, parse("q"))
    checks = [c for s in shouted.sentences + shouted.removed for c in s.checks]
    assert [c.name for c in checks if not c.passed and c.name != "decision"] == ["toy_no_shouting"]
    vector = np.asarray(embedder.embed(loud), dtype=np.float32)
    assert trust.verify(loud, vector, evidence[0]).features["fail_toy_no_shouting"] == 1.0
    # Without its name in the settings the class is never run.
    plain = check_answer(loud, evidence, embedder, Trust.of(support_threshold=0.3), parse("q"))
    assert "toy_no_shouting" not in {c.name for s in plain.sentences + plain.removed for c in s.checks}


def test_a_new_rule_is_one_class_and_its_name_in_the_settings():
    assert RULES["toy_too_long"] is TooLong
    trust = Trust.of(rules=["toy_too_long"])
    nothing = check_answer("", [], FakeEmbedder(), trust, parse("q"))
    (rule,) = trust.refusal_rules  # a signal the selector reads (`rule_toy_too_long`)
    refusal = rule.refuse(Drafted("x" * 41, nothing, parse("q")))
    assert refusal.code == "toy_too_long" and refusal.reason == TooLong.reason
    assert rule.refuse(Drafted("short", nothing, parse("q"))) is None


def test_an_unknown_name_is_an_error_that_lists_the_known_ones():
    with pytest.raises(UnknownName, match="'numbrs'.*known: .*numbers"):
        Trust.of(checks=["numbrs"])
    with pytest.raises(UnknownName, match="RAG_TRUST__RULES"):
        Trust.of(rules=["low_relevanse"])
    with pytest.raises(ValueError):  # a misspelt threshold too, not a silent default
        TrustSettings(min_coverge=0.3)


def test_the_cli_stops_at_start_up_on_an_unknown_name(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RAG_TRUST__CHECKS", '["numbers", "numbrs"]')
    out = CliRunner().invoke(app, ["search", "knowledge entropy"])
    assert out.exit_code == 1
    assert "unknown trust check 'numbrs'" in out.output and "Traceback" not in out.output


def test_the_trust_section_reads_its_own_variables(monkeypatch):
    monkeypatch.setenv("RAG_TRUST__MIN_COVERAGE", "0.7")
    monkeypatch.setenv("RAG_TRUST__RULES", '["restates_question"]')
    settings = Settings()
    assert settings.trust.min_coverage == 0.7 and settings.trust.rules == ["restates_question"]
    assert Trust(settings.trust).rules == ("restates_question",)
