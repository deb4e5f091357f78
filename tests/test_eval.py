"""The evaluation harness: metrics on known values, the gold schema check, a run on fakes."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from eval import metrics as m
from eval.configs import Config
from eval.gold import DEFAULT_GOLD, TYPES, GoldError, load_gold, read_jsonl
from eval.report import compare, write_report
from eval.runner import run_config
from eval.split import imbalance
from rag.cli import app
from tests.conftest import SEEDS, make_pipeline, write_jsonl


def test_normalize_and_contains_handle_numbers_case_hyphens():
    assert m.contains("It has over 6800 hours", "6,800")
    assert m.contains("speed-ups of 1.53× at 40\\% sparsity", "1.53x")
    assert m.contains("trained on TIME 300B", "Time-300B")
    assert not m.contains("18x fewer parameters", "8")
    assert not m.contains("a 0.8 gain", "8")
    assert m.contains("over 8x faster.", "8")


def test_retrieval_metrics_known_values():
    ranked = ["a", "b", "c", "d"]
    assert m.hit_at_k(ranked, ["c"], 1) == 0 and m.hit_at_k(ranked, ["c"], 5) == 1
    assert m.recall_at_k(ranked, ["a", "z"], 5) == 0.5
    assert m.mrr(ranked, ["c"]) == pytest.approx(1 / 3)
    assert m.mrr(ranked, ["z"]) == 0.0
    assert m.ndcg_at_k(ranked, ["a"], 10) == 1.0
    assert m.ndcg_at_k(ranked, ["b"], 10) == pytest.approx(1 / math.log2(3))
    assert m.hit_at_k(ranked, [], 5) is None  # no gold papers: the metric does not apply


def test_answer_and_citation_metrics():
    facts = [["Time-300B"], ["2.4 billion", "2.4B"]]
    assert m.fact_recall("Trained on Time-300B.", facts) == 0.5
    cited = [("p1", "data Time-300B spans 9 domains"), ("p1", "unrelated text"), ("p2", "Time-300B")]
    assert m.citation_precision(cited, ["p1"], facts) == pytest.approx(1 / 3)
    assert m.citation_recall(["p1"], ["p1", "p2"]) == 0.5
    assert m.cited_sentence_share([[1], [], [2, 3]]) == pytest.approx(2 / 3)


def test_abstention_scores():
    s = m.abstention_scores(
        abstained=[True, True, False, False],
        answerable=[False, True, True, False],
        correct=[True, False, True, False],
    )
    assert s["abstain_precision"] == 0.5 and s["abstain_recall"] == 0.5
    assert s["abstain_accuracy"] == 0.5 and s["abstain_rate"] == 0.5
    assert s["litqa_accuracy"] == 0.5 and s["litqa_precision"] == 0.5


def test_shipped_gold_set_meets_the_spec():
    known = {json.loads(line)["id"] for line in (SEEDS / "papers.jsonl").read_text().splitlines()}
    items = load_gold([DEFAULT_GOLD], known)
    assert len(items) >= 80
    counts = {t: sum(i.type == t for i in items) for t in TYPES if t != "survey"}
    assert all(counts.values()), counts
    unanswerable = [i for i in items if i.type == "unanswerable"]
    assert len(unanswerable) >= 12 and sum(i.near_miss for i in unanswerable) >= 4


def test_the_real_conference_gold_is_split_by_paper():
    from eval.gold import CONFERENCE_GOLD
    from eval.halves import HALVES

    drawn = read_jsonl(CONFERENCE_GOLD / "papers.jsonl") + read_jsonl(CONFERENCE_GOLD / "papers-test.jsonl")
    split_of = {r["id"]: r["split"] for r in drawn}
    assert len(drawn) == len(split_of) >= 240  # no paper drawn twice
    splits = (*HALVES, "test")
    parts = {name: load_gold([CONFERENCE_GOLD / f"{name}.jsonl"], set(split_of)) for name in splits}
    assert len(parts["test"]) >= 200 and sum(map(len, parts.values())) >= 400
    for name, items in parts.items():
        about = {p for i in items for p in i.papers} | {r["about"] for r in read_jsonl(
            CONFERENCE_GOLD / f"{name}.jsonl") if r.get("about")}  # fmt: skip
        assert {split_of[p] for p in about} == {name}, name  # no paper has items in two splits
        kinds = {(i.type, i.near_miss) for i in items}
        assert {t for t, _ in kinds} >= set(TYPES) - {"paraphrase", "multi", "survey"}, kinds
        assert ("unanswerable", True) in kinds and ("unanswerable", False) in kinds
    survey = [r for name in splits for r in read_jsonl(CONFERENCE_GOLD / f"survey-{name}.jsonl")]
    assert {r["split"] for r in survey} == set(splits)
    assert sum(r["split"] == "test" for r in survey) >= 30
    techniques = {name: {r["technique"].lower() for r in survey if r["split"] == name} for name in splits}
    assert not techniques["test"] & (techniques["dev-a"] | techniques["dev-b"])
    assert not techniques["dev-a"] & techniques["dev-b"]


def test_the_fresh_test_papers_were_never_named_in_any_other_gold_or_claim_file():
    from eval.draw import FRESH_OUT, ROOT, _ids_in
    from eval.gold import CONFERENCE_GOLD

    own = {FRESH_OUT, CONFERENCE_GOLD / "test.jsonl", CONFERENCE_GOLD / "survey-test.jsonl"}
    fresh = {r["id"] for r in read_jsonl(FRESH_OUT)}
    # A survey list names every paper on its topic, and the judges' data (tested below) only
    # trainable ones: neither is a set of items about those papers.
    skipped = lambda path: path in own or path.name.startswith("survey-") or "judge" in path.parts  # noqa: E731
    named = {pid for path in (ROOT / "eval").rglob("*.jsonl") if not skipped(path)
             for row in read_jsonl(path) for pid in _ids_in(row)}  # fmt: skip
    assert len(fresh) >= 100 and not fresh & named


def test_training_data_holds_only_trainable_papers_and_none_of_a_sealed_set():
    """Every paper the judges' and the reader's training data name has an id whose sha1 ends even,
    and none is a paper of the sealed sets."""
    from eval.draw import ROOT
    from eval.gold import CONFERENCE_GOLD
    from eval.judge.corpus import trainable

    sealed = {p for row in read_jsonl(CONFERENCE_GOLD / "sealed.jsonl") for p in row.get("papers") or []}
    named: set[str] = set()
    for path in sorted((ROOT / "eval" / "judge" / "data").glob("*.jsonl")):
        for row in read_jsonl(path):
            named |= {row[k] for k in ("paper", "paper_id", "nearest") if isinstance(row.get(k), str)}
    assert named and all(trainable(p) for p in named)
    assert not named & sealed


def test_dev_halves_side_by_side_show_each_half_and_the_gap():
    from eval.halves import side_by_side
    from eval.runner import ItemResult

    def result(item_id: str, facts: float) -> ItemResult:
        return ItemResult("hybrid", item_id, "lookup", "q", "q", ["p"], ["p"], {"facts_cited": facts}, {})

    lines = side_by_side([result("a1", 1.0), result("a2", 1.0), result("b1", 0.0), result("b2", 1.0)],
                         {"a1": "dev-a", "a2": "dev-a", "b1": "dev-b", "b2": "dev-b"})  # fmt: skip
    row = next(line for line in lines if line.startswith("| facts_cited"))
    assert row == "| facts_cited | 1.000 | 0.500 | -0.500 |"
    assert "dev-a (2)" in lines[2] and "dev-b (2)" in lines[2]


def test_the_committed_split_is_balanced_apart_from_dev_only_items():
    dev, test = (read_jsonl(DEFAULT_GOLD / f"{name}.jsonl") for name in ("dev", "test"))
    assert imbalance(dev, test) == []
    test_only = [r for r in test if r.get("dev_only")]
    assert not test_only, "a dev-only item in the test split"
    # Without the flag, the which-paper items written later for dev would unbalance the split.
    assert imbalance([{k: v for k, v in r.items() if k != "dev_only"} for r in dev], test)


@pytest.mark.parametrize(
    "row, message",
    [
        ({"id": "x", "question": "q?", "type": "lookup", "facts": [["a"]]}, "missing field(s) papers"),
        ({"id": "x", "question": "q?", "type": "trivia", "facts": [], "papers": []}, "unknown type 'trivia'"),
        (
            {"id": "x", "question": "q?", "type": "lookup", "facts": [["a"]], "papers": ["nope"]},
            "unknown paper id(s) nope",
        ),
        (
            {"id": "x", "question": "q?", "type": "lookup", "facts": [], "papers": ["p1"]},
            "needs at least one fact",
        ),
        (
            {"id": "x", "question": "q?", "type": "followup", "facts": ["a"], "papers": ["p1"]},
            "needs 'history'",
        ),
        (
            {"id": "x", "question": "q?", "type": "lookup", "facts": [[""]], "papers": ["p1"]},
            "non-empty string",
        ),
    ],
)
def test_gold_schema_errors_name_line_and_problem(tmp_path, row, message):
    path = write_jsonl(
        tmp_path / "gold.jsonl",
        [{"id": "ok", "question": "q?", "type": "lookup", "facts": ["a"], "papers": ["p1"]}, row],
    )
    with pytest.raises(GoldError) as err:
        load_gold([path], {"p1"})
    assert f"{path}:2" in str(err.value) and message in str(err.value)


def test_gold_rejects_bad_json_and_repeated_ids(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1,\n')
    with pytest.raises(GoldError, match="bad.jsonl:1: not valid JSON"):
        load_gold([bad])
    row = {"id": "a", "question": "q?", "type": "lookup", "facts": ["x"], "papers": ["p1"]}
    with pytest.raises(GoldError, match="id 'a' already used"):
        load_gold([write_jsonl(tmp_path / "twice.jsonl", [row, row])])


GOLD = [
    {"id": "g1", "question": "How does knowledge entropy change during pretraining?", "type": "lookup",
     "facts": [["declines", "decline"]], "papers": ["p-entropy"]},
    {"id": "g2", "question": "What do routing weights serve as?", "type": "lookup",
     "facts": ["embeddings"], "papers": ["p-moe"]},
    {"id": "g3", "question": "Who won the football world cup?", "type": "unanswerable", "facts": [], "papers": []},
]  # fmt: skip


def test_run_and_report_with_fakes(tmp_path, indexed, embedder):
    from eval.gold import parse_item

    items = [parse_item(r, "test") for r in GOLD]
    replies = [
        "Knowledge entropy declines steadily as pretraining advances [1].",
        "They serve as heatmaps [9].",
        "France won it [1].",  # no rule refuses before the model writes: the selector decides
    ]
    pipeline, llm = make_pipeline(indexed, embedder, replies)
    results = run_config(Config("hybrid", "test"), items, pipeline)
    by_id = {r.id: r for r in results}
    assert by_id["g1"].scores["fact_recall"] == 1.0 and by_id["g1"].scores["citation_recall"] == 1.0
    assert by_id["g1"].ranked[0] == "p-entropy" and by_id["g1"].scores["hit@1"] == 1.0
    assert by_id["g2"].scores["fact_recall"] == 0.0  # the model said the wrong thing
    assert by_id["g3"].abstained and by_id["g3"].scores["correct"] == 1.0
    assert len(llm.prompts) == 3  # every item drafted: no rule refuses before the model writes

    summary = write_report(tmp_path / "a", results, _meta())
    cfg = summary["configs"]["hybrid"]
    assert cfg["fact_recall"] == 0.5 and cfg["abstain_recall"] == 1.0 and cfg["hit@1"] == 1.0
    for name in (
        "results.jsonl",
        "summary.json",
        "report.md",
        "metrics_by_config.png",
        "by_type.png",
        "latency.png",
    ):
        assert (tmp_path / "a" / name).stat().st_size > 0
    report = (tmp_path / "a" / "report.md").read_text()
    assert report.index("## Side by side") < report.index("## Retrieval")
    assert len((tmp_path / "a" / "results.jsonl").read_text().splitlines()) == 3

    worse = [r for r in results]
    worse[0].scores["fact_recall"] = 0.0
    write_report(tmp_path / "b", worse, _meta())
    lines = compare(tmp_path / "a", tmp_path / "b")
    assert any("fact_recall" in line and "WORSE" in line for line in lines)


def test_a_follow_up_is_asked_after_its_answered_first_turn_and_replays(tmp_path, indexed, embedder):
    from eval.gold import parse_item
    from eval.replay import ReplayLLM
    from rag.answer.pipeline import Pipeline

    row = {"id": "f1", "question": "How much does it improve benchmarks?", "type": "followup",
           "history": ["Can mixture-of-experts routers be embeddings?"], "facts": ["10.5"], "papers": ["p-moe"]}  # fmt: skip
    replies = ["Routing weights serve as embeddings [1].", "It improves them by 10.5 percent [1]."]
    pipeline, llm = make_pipeline(indexed, embedder, replies, source_rules=["pin_follow_ups"])
    (result,) = run_config(Config("hybrid", "test"), [parse_item(row, "test")], pipeline)
    assert len(llm.prompts) == 2  # the first turn was answered, as the user saw it
    assert result.turns[0]["draft"] == replies[0] and result.turns[0]["cited"] == ["p-moe"]
    assert result.sources == ["p-moe"]  # the follow-up reads the paper the first answer cited
    assert result.scores["fact_recall"] == 1.0
    # Retrieval-only runs ask the model nothing.
    pipeline, llm = make_pipeline(indexed, embedder, [], source_rules=["pin_follow_ups"])
    run_config(Config("hybrid", "test"), [parse_item(row, "test")], pipeline, answer=False)
    assert llm.prompts == []
    # A replay reads both turns' drafts from the stored run.
    write_jsonl(tmp_path / "results.jsonl", [result.to_json()])
    replay = Pipeline(pipeline.settings, store=indexed, embedder=embedder, llm=ReplayLLM(tmp_path))
    (again,) = run_config(Config("hybrid", "test"), [parse_item(row, "test")], replay)
    assert again.answer == result.answer and again.sources == ["p-moe"]


def test_a_stopped_run_resumes_where_it_stopped(tmp_path, indexed, embedder):
    from eval.harness import evaluate

    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    replies = [
        "Knowledge entropy declines steadily as pretraining advances [1].",
        "They serve as heatmaps [9].",
        "France won it [1].",
    ]
    pipeline, llm = make_pipeline(indexed, embedder, replies)
    out, first = evaluate(pipeline, gold=[gold], configs=["hybrid"], out=tmp_path / "run")
    lines = (out / "progress.jsonl").read_text().splitlines()
    assert len(lines) == 3 and len(llm.prompts) == 3  # each item written as it was scored
    # Stopped after g1, in the middle of writing g2's line.
    (out / "progress.jsonl").write_text(lines[0] + "\n" + lines[1][:40])
    pipeline, llm = make_pipeline(indexed, embedder, ["They serve as heatmaps [9].", "France won it [1]."])
    _, again = evaluate(pipeline, gold=[gold], configs=["hybrid"], out=out, resume=True)
    assert len(llm.prompts) == 2  # only g2 and g3 drafted again; g1 kept
    assert again["resumed"] == 1 and "Resumed: 1" in (out / "report.md").read_text()
    assert again["configs"]["hybrid"]["fact_recall"] == first["configs"]["hybrid"]["fact_recall"]
    assert [r["id"] for r in read_jsonl(out / "results.jsonl")] == ["g1", "g2", "g3"]


def test_runs_take_turns_in_blocks_so_host_drift_hits_every_index_size_alike():
    from types import SimpleNamespace

    from eval.harness import BLOCK, interleaved

    items = [SimpleNamespace(id=f"q{k}") for k in range(2 * BLOCK + 1)]
    runs = [("hybrid N=0",), ("hybrid N=10000",)]
    order = [(run[0], item.id) for run, item in interleaved(runs, items, {("hybrid N=0", "q0"): None})]
    assert len(order) == 2 * len(items) - 1 and len(set(order)) == len(order)  # each pair once, done skipped
    assert order[: 2 * BLOCK - 1] == [("hybrid N=0", f"q{k}") for k in range(1, BLOCK)] + [
        ("hybrid N=10000", f"q{k}") for k in range(BLOCK)
    ]
    # the next block starts with the size that went last: neither size always goes first
    assert order[2 * BLOCK - 1] == ("hybrid N=10000", f"q{BLOCK}")
    # no question is asked twice in a row, where its own prompt would sit in the model's cache
    assert all(a[1] != b[1] for a, b in zip(order, order[1:]))


def _meta() -> dict:
    return {"created": "t", "gold": "g", "n_items": 3, "mode": "m", "command": "c", "machine": "x",
            "wall_s": 1.0, "descriptions": {"hybrid": "test"}}  # fmt: skip


def test_cli_eval_lists_configs_and_reports_bad_gold(tmp_path):
    runner = CliRunner()
    listed = runner.invoke(app, ["eval", "--list"])
    assert listed.exit_code == 0 and "llamaindex" in listed.stdout and "(default)" in listed.stdout
    missing = runner.invoke(app, ["eval", "--compare", str(tmp_path), str(tmp_path)])
    assert missing.exit_code == 1 and "no summary.json" in missing.stderr


def test_ablation_judges_the_same_drafts_with_each_check_off_and_rescore_matches(tmp_path, indexed, embedder):
    from eval.gold import parse_item
    from eval.rescore import rescore

    items = [parse_item(r, "test") for r in GOLD]
    replies = [
        "Knowledge entropy declines steadily as pretraining advances [1].",
        "Routing weights serve as embeddings without finetuning in 77 ways [1].",  # invented number
        "France won it [1].",
    ]
    pipeline, llm = make_pipeline(indexed, embedder, replies)
    results = run_config(Config("hybrid", "test"), items, pipeline, ablation=True)
    assert len(llm.prompts) == 3  # every item drafted once
    by_id = {r.id: r for r in results}
    assert by_id["g3"].abstained
    assert by_id["g2"].abstained and by_id["g2"].variants["numbers"]["refused_answerable"] == 0.0
    assert by_id["g1"].variants["numbers"]["fact_recall"] == 1.0
    summary = write_report(tmp_path / "r", results, _meta())
    rows = summary["ablation"]["hybrid"]
    assert (
        rows["all on"]["refused_answerable"] == 0.5 and rows["without numbers"]["refused_answerable"] == 0.0
    )
    assert "## Ablation: hybrid" in (tmp_path / "r" / "report.md").read_text()
    ci = summary["configs"]["hybrid"]["fact_recall_ci"]
    assert ci is None or ci[0] <= summary["configs"]["hybrid"]["fact_recall"] <= ci[1]

    _, again = rescore(tmp_path / "r", items)
    for key in ("fact_recall", "refused_answerable", "refused_unanswerable", "citation_recall"):
        assert again["configs"]["hybrid"][key] == summary["configs"]["hybrid"][key], key


def test_fact_recall_ignores_markers_and_facts_the_question_gives():
    assert m.fact_recall("It uses [1] sources [2].", [["1"]]) == 0.0  # "[1]" is not the fact "1"
    assert (
        m.fact_recall("Time-MoE uses experts.", [["Time-MoE"], ["experts"]], "What does Time-MoE use?") == 1.0
    )
    assert m.fact_recall("anything", [["Time-MoE"]], "What is Time-MoE?") is None
    assert m.citation_precision([], ["p1"], [["x"]]) == 0.0  # answered with no citation
    assert m.bootstrap_ci([1.0, 0.0, 1.0, 1.0]) is not None and m.bootstrap_ci([1.0]) is None


def test_offered_counts_the_facts_and_tokens_each_config_shows_the_model_without_generating(
    indexed, embedder
):
    from eval.gold import parse_item
    from eval.offered import measure, table

    items = [parse_item(r, "test") for r in GOLD[:2]]
    pipeline, llm = make_pipeline(indexed, embedder, [], source_within=10.0)
    offers = {(o.config, o.item): o for o in measure(pipeline, items, ["hybrid", "k5"], [0])}
    assert llm.prompts == []  # nothing generated
    assert offers["hybrid", "g1"].facts_shown == 1.0 and offers["hybrid", "g1"].sources[0] == "p-entropy"
    assert offers["hybrid", "g2"].facts_shown == 1.0  # "embeddings" is in the MoE abstract
    # k5 offers more papers (the one-paper filter is per config too), so a longer prompt.
    assert offers["k5", "g1"].prompt_tokens >= offers["hybrid", "g1"].prompt_tokens
    assert pipeline.settings.answer_k == 3  # the config's overrides do not outlive the measurement
    lines = table(list(offers.values()))
    assert lines[2].startswith("| hybrid | 0 | 1.000 (2) |") and lines[3].startswith("| k5 | 0 |")


def test_each_miss_gets_the_first_cause_that_holds():
    from eval.gold import parse_item
    from eval.misses import classify
    from eval.runner import ItemResult

    item = parse_item({"id": "q", "type": "lookup", "question": "What does X use?", "facts": [["GRPO"]],
                       "papers": ["p"]}, "t")  # fmt: skip

    def result(**kw) -> ItemResult:
        base = dict(config="hybrid", id="q", type="lookup", question=item.question, query=item.question,
                    gold_papers=["p"], ranked=["p"], scores={"facts_cited": 0.0}, latency={}, answered=True,
                    sources=["p"])  # fmt: skip
        return ItemResult(**(base | kw))

    assert classify(result(scores={"facts_cited": 1.0}), item) is None
    assert classify(result(sources=["other"]), item).cause == "not_retrieved"
    removed = [{"text": "X uses GRPO (Gradient Reward).", "failed": ["..."], "checks": ["names"]}]
    miss = classify(result(abstained=True, abstain_code="selected_refusal", removed=removed), item)
    assert (miss.cause, miss.detail) == ("true_sentence_removed", "names")
    assert (
        classify(result(abstained=True, abstain_code="draft_declined"), item).cause == "refused_after_writing"
    )
    assert classify(result(answer="X uses a policy method."), item).cause == "non_answer_shown"
    assert classify(result(answer="X uses GRPO."), item).cause == "wrong_paper_cited"


def test_a_set_written_by_others_is_read_in_its_own_keys_and_type_names(tmp_path):
    path = tmp_path / "outside.jsonl"
    rows = [
        {"id": "o1", "type": "which_paper", "question": "Which method erases concepts with gates?",
         "answer_any": [["Concept Pinpoint Eraser", "CPE"]], "paper_ids": ["ZRDhBwKs7l"]},
        {"id": "o2", "type": "unanswerable", "near_miss": True, "question": "How many GPUs trained it?"},
        {"id": "o3", "type": "unanswerable", "question": "Which LLMs?", "facts": [], "papers": [],
         "near": ["a1P5kh2oo8"]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    which, near, named = load_gold([path])
    assert which.type == "whichpaper" and which.papers == ["ZRDhBwKs7l"]
    assert which.facts == [["Concept Pinpoint Eraser", "CPE"]]
    assert not near.answerable and near.near_miss and near.facts == [] and near.papers == []
    assert not named.answerable
