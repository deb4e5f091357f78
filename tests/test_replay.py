"""`citewise eval --replay`: stored drafts and paper confirmations answered from a run's
results.jsonl; a confirmation the run never stored is asked of the live model, or fails clearly."""

import json

import pytest

from eval.replay import ReplayLLM
from rag.answer.prompts import (
    CONFIRM_SYSTEM,
    CONFIRM_USER,
    ENTAIL_SYSTEM,
    ENTAIL_USER,
)
from rag.llm import LLMError
from tests.fakes import FakeLLM

QUESTION = "Which paper draws training setups as pictures?"
TITLE = "Learning Diagrams: A Graphical Language for Compositional Training Regimes"


def _run(tmp_path, **extra):
    row = {"id": "which-13", "question": QUESTION, "query": QUESTION, "answered": True,
           "draft": "The paper is [1].", **extra}  # fmt: skip
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    return tmp_path


def _confirm(title: str = TITLE) -> list[dict[str, str]]:
    user = CONFIRM_USER.format(title=title, text="We introduce learning diagrams.", question=QUESTION)
    return [{"role": "system", "content": CONFIRM_SYSTEM}, {"role": "user", "content": user}]


def test_stored_draft_and_confirmation_are_replayed(tmp_path):
    llm = ReplayLLM(_run(tmp_path, paper_confirmed={TITLE: False}))
    assert llm.items == {"which-13"}
    assert llm.complete([{"role": "system", "content": "x"}, {"role": "user", "content": f"Question: {QUESTION}\n..."}]) == "The paper is [1]."  # fmt: skip
    assert llm.complete(_confirm()) == "NO"


def test_a_confirmation_the_run_never_stored_goes_to_the_live_model_or_fails(tmp_path):
    live = FakeLLM(["YES"])
    assert ReplayLLM(_run(tmp_path), live=lambda: live).complete(_confirm()) == "YES"
    assert live.prompts == [_confirm()]
    # The live verdict is kept beside the drafts: asked again, the model is not.
    assert ReplayLLM(_run(tmp_path), live=lambda: FakeLLM(["NO"])).complete(_confirm()) == "YES"
    with pytest.raises(LLMError, match="no stored verdict"):
        ReplayLLM(_run(tmp_path)).complete(_confirm("Another paper"))
    # Older runs stored the answer to another prompt (`confirmed`): not replayed.
    older = tmp_path / "older"
    older.mkdir()
    with pytest.raises(LLMError, match="no stored verdict"):
        ReplayLLM(_run(older, confirmed={TITLE: True})).complete(_confirm())


def test_the_entailment_verdict_a_run_never_asked_goes_to_the_live_model(tmp_path):
    user = ENTAIL_USER.format(title=TITLE, passage="It is training-free.", claim="It needs no training.")
    asked = [{"role": "system", "content": ENTAIL_SYSTEM}, {"role": "user", "content": user}]
    live = FakeLLM(["SUPPORTED"])
    assert ReplayLLM(_run(tmp_path), live=lambda: live).complete(asked) == "SUPPORTED"
    assert live.prompts == [asked]
    with pytest.raises(LLMError, match="no live model"):
        ReplayLLM(_run(tmp_path)).complete(asked)


def test_a_run_with_several_configurations_is_not_replayed_as_one(tmp_path):
    # Drafts are found by question: the baseline's draft would stand in for citewise's.
    rows = [
        {
            "id": "which-13",
            "config": config,
            "question": QUESTION,
            "query": QUESTION,
            "answered": True,
            "draft": d,
        }
        for config, d in (("hybrid N=0", "The paper is [1]."), ("llamaindex N=0", "Learning Diagrams."))
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match="2 configurations"):
        ReplayLLM(tmp_path)
    (tmp_path / "results.jsonl").write_text(json.dumps(rows[0]) + "\n")
    assert ReplayLLM(tmp_path).items == {"which-13"}
