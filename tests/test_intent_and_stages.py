"""The question is parsed once per answer into an `Intent`, and the draft goes through named stages
that each leave a record in the answer's trace."""

import pytest

from rag import question as qs
from rag.answer.pipeline import Turn
from rag.answer.stages import OPTIONAL, STAGES, pipeline_of
from rag.question import Kind, parse
from tests.conftest import make_pipeline


@pytest.mark.parametrize(
    "question,kind",
    [
        ("What does the graph transformer use to scale attention?", Kind.ONE_PAPER),
        ("Which paper compresses language model weights below one bit?", Kind.WHICH_PAPER),
        ("Is there a paper on routing weights as embeddings?", Kind.WHICH_PAPER),
        ("Which papers study sparse attention or mixture-of-experts routing?", Kind.SEVERAL_PAPERS),
        ("Are there studies on knowledge entropy?", Kind.SEVERAL_PAPERS),
        ("What accuracy does the router reach compared with a dense baseline?", Kind.COMPARISON),
        ("How does the method fare versus plain fine-tuning?", Kind.COMPARISON),
        # The kind of paper said before "paper": still a which-paper question.
        ("Which graph learning paper routes messages along random walks?", Kind.WHICH_PAPER),
        ("Which offline RL paper prunes its dataset?", Kind.WHICH_PAPER),
        ("Which recent papers study data pruning?", Kind.SEVERAL_PAPERS),
        # "works" as a verb and "the study" as a subject ask for no paper.
        ("What learning rate works best for the optimizer?", Kind.ONE_PAPER),
        ("What dataset does the study evaluate on?", Kind.ONE_PAPER),
    ],
)
def test_the_kind_of_a_question(question, kind):
    assert parse(question).kind is kind


@pytest.mark.parametrize(
    "question,parts",
    [
        ("How many layers and heads does the encoder have?", 2),
        ("What does the router learn, and how fast is inference?", 2),
        ("Why does entropy fall? What stops it?", 2),
        ("What does the router learn?", 1),
    ],
)
def test_each_part_of_a_question_is_its_own_part(question, parts):
    assert len(parse(question).parts) == parts


def test_a_several_papers_question_with_or_has_one_alternative_per_description():
    intent = parse("Which papers study graph sampling or protein design?")
    assert intent.alternatives == ("Which papers study graph sampling?", "Which papers study protein design?")
    assert len(intent.described) == 1 + len(intent.alternatives)
    assert parse("Which paper studies graph sampling or protein design?").alternatives == ()


def test_counts_and_names():
    assert parse("How many GPUs were used to train Quokka?").counts == ("GPUs",)
    assert parse("Is there a paper that picks how many dimensions each layer gets?").counts == ()
    assert "Quokka" in parse("What does Quokka predict?").names


def test_a_follow_up_names_the_paper_it_points_back_to(indexed, embedder):
    pipeline, _ = make_pipeline(indexed, embedder, ["Routing weights serve as embeddings [1]."])
    first = pipeline.ask("Can mixture-of-experts routers be embeddings?")
    intent = parse("Which benchmarks did they use?", [Turn(first.question, first)])
    assert intent.kind is Kind.FOLLOW_UP and intent.about.id == "p-moe"
    assert intent.query.endswith("(about: MoE Routers as Embeddings)")
    assert parse("Do other papers do this?", [Turn(first.question, first)]).about is None


@pytest.mark.parametrize(
    "question",
    [
        "How does knowledge entropy change during pretraining?",
        "Which papers study sparse attention or mixture-of-experts routing?",
        "What is the boiling point of tungsten?",
    ],
)
def test_a_question_is_parsed_once_per_answer(indexed, embedder, monkeypatch, question):
    pipeline, _ = make_pipeline(indexed, embedder, ["Knowledge entropy declines [1]."])
    calls = []
    real = qs.read

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(qs, "read", counting)
    answer = pipeline.ask(question)
    assert calls == [question]
    assert answer.intent is not None and answer.to_json()["intent"]["kind"] == answer.intent.kind.value


def test_every_stage_leaves_its_record_in_order(indexed, embedder):
    pipeline, _ = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines as pretraining advances [1]. The moon is cheese [1]."]
    )
    answer = pipeline.ask("How does knowledge entropy change during pretraining?")
    order = list(dict.fromkeys(t.stage for t in answer.trace))
    # In the stages' order; a refusal (the selector's) ends the answer after its stage.
    assert order == list(STAGES)[: len(order)] and {"check", "select"} <= set(order)
    removed = [t for t in answer.trace if t.decision == "removed"]
    assert [t.sentence for t in removed] == [s.text for s in answer.removed] and removed[0].reason
    assert "not kept" in removed[0].reason  # the sentence decision's reason, in words
    assert answer.to_json()["trace"][0]["stage"] == "clean"


def test_no_rule_refuses_before_the_model_writes_the_selector_decides(indexed, embedder):
    pipeline, llm = make_pipeline(indexed, embedder, ["Tungsten boils at 5555 degrees [1]."])
    answer = pipeline.ask("What is the boiling point of tungsten?")
    assert llm.prompts and "select" in {t.stage for t in answer.trace}
    assert "5555" not in answer.text  # no source says it: the sentence decision removes it


def test_optional_stages_switch_off_by_name_and_the_rest_always_run(indexed, embedder):
    assert [s.name for s in pipeline_of(["check"])] == ["check", "select", "render"]
    assert [s.name for s in pipeline_of(STAGES)] == list(STAGES)
    with pytest.raises(ValueError, match="unknown answer stage"):
        pipeline_of(["spellcheck"])
    pipeline, _ = make_pipeline(
        indexed,
        embedder,
        ["Knowledge entropy declines as pretraining advances [1]."],
        answer_stages=[s for s in STAGES if s != "clean"],
    )
    answer = pipeline.ask("How does knowledge entropy change during pretraining?")
    assert "clean" not in {t.stage for t in answer.trace} and "check" in {t.stage for t in answer.trace}
    assert set(OPTIONAL) < set(STAGES) and {"check", "select", "render"}.isdisjoint(OPTIONAL)


@pytest.mark.parametrize(
    "question,subjects",
    [
        (
            "How do the router and the sparse encoder each scale attention?",
            ("the router", "the sparse encoder"),
        ),
        ("Which benchmarks are EntroKit and MoERoute each evaluated on?", ("EntroKit", "MoERoute")),
        ("EntroKit and MoERoute both avoid labels. What does each rely on?", ("EntroKit", "MoERoute")),
        ("Is there a paper that picks how many dimensions each layer gets?", ()),
        ("What does the router learn and how does each expert specialize?", ()),
    ],
)
def test_two_named_things_asked_the_same_are_the_subjects(question, subjects):
    intent = parse(question)
    assert intent.subjects == subjects
    if subjects:
        assert intent.kind is Kind.COMPARISON
        # Each part asks the question of one subject alone, and of no other.
        for part, subject, other in zip(intent.parts, subjects, reversed(subjects)):
            assert subject in part and other not in part and " each " not in part


def test_a_comparison_of_two_papers_reads_and_cites_each_paper(indexed, embedder):
    pipeline, llm = make_pipeline(
        indexed,
        embedder,
        [
            "Routing weights serve as embeddings [1].",
            "Knowledge entropy declines as pretraining advances [1].",
        ],
    )
    answer = pipeline.ask("How do the mixture-of-experts routers and knowledge entropy each behave?")
    # One prompt per subject, each with its own paper as source [1].
    assert len(llm.prompts) == 2
    assert "MoE Routers" in llm.prompts[0][1]["content"] and "Entropy" not in llm.prompts[0][1]["content"]
    assert "Knowledge Entropy" in llm.prompts[1][1]["content"]
    assert {c.paper_id for c in answer.citations} == {"p-moe", "p-entropy"}
    assert "[1]" in answer.text and "[2]" in answer.text


@pytest.mark.parametrize(
    "question,wants",
    [
        ("How many nodes do the graphs have?", qs.Wanted.NUMBER),
        ("By how much does the method improve embedding benchmarks?", qs.Wanted.NUMBER),
        ("What percentage of tokens are pruned?", qs.Wanted.NUMBER),
        ("How large do the graphs get?", qs.Wanted.NUMBER),
        ("How does the router embed text?", qs.Wanted.ANY),
        ("Does the router need finetuning?", qs.Wanted.YES_NO),
        ("Which paper reports how many nodes its graphs have?", qs.Wanted.PAPER),
        ("How many papers study routing?", qs.Wanted.PAPER),
    ],
)
def test_what_kind_of_thing_the_answer_must_contain(question, wants):
    assert parse(question).wants is wants
