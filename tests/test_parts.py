"""Answers by parts (rag/answer/parts/): how each kind of question is split into parts, each with
its own paper; a part that cannot be answered; the parts' prompts each holding one paper only."""

from __future__ import annotations

import pytest

from rag.answer.parts.plan import Part, plan
from rag.answer.parts.run import Written, compose
from rag.answer.stages import STAGES
from rag.question import read as parse
from rag.question.clauses import compared, questions
from rag.search.evidence import Evidence, Sentence
from rag.types import Answer, AnswerSentence, Citation, Paper, SearchResult, Timings, Turn
from tests.conftest import make_pipeline

NEDAG = Paper("p-nedag", "NEDAG learns weight matrices of a directed acyclic graph.", "NEDAG: graphs")
GPGAPE = Paper("p-gpgape", "GPGapE explores bandits with Gaussian processes.", "GPGapE: bandits")
FLASH = Paper("p-flash", "FlashX runs 2x faster than FlashAttention-2 on long sequences.", "FlashX")


def result(paper: Paper, rank: int = 1) -> SearchResult:
    return SearchResult(rank, paper, 1.0, [])


def searcher(*papers: Paper):
    """A search that ranks first the paper whose title or abstract shares the most words."""

    def search_one(text: str) -> list[SearchResult]:
        words = set(text.lower().split())
        ranked = sorted(papers, key=lambda p: -len(words & set(p.text.lower().split())))
        return [result(p, i) for i, p in enumerate(ranked, 1)]

    return search_one


@pytest.mark.parametrize(
    "question,pair",
    [
        ("How does NEDAG differ from GPGapE in what it learns?", ("NEDAG", "GPGapE")),
        ("NEDAG vs GPGapE: what does each learn?", ("NEDAG", "GPGapE")),
        ("Compare NEDAG with GPGapE on what they learn", ("NEDAG", "GPGapE")),
        ("How do NEDAG and GPGapE each explore?", ("NEDAG", "GPGapE")),
        ("Which of NEDAG and GPGapE uses Gaussian processes?", ("NEDAG", "GPGapE")),
        (
            "How do the multi-round conversational jailbreak (MRCJ) and INSEC deliver their attacks?",
            ("the multi-round conversational jailbreak (MRCJ)", "INSEC"),
        ),
    ],
)
def test_a_comparison_in_any_wording_names_its_two_things(question, pair):
    found = compared(question)
    assert found is not None and found[0] == pair
    # Each thing's own question keeps what is asked and drops the other thing.
    for thing, other, alone in zip(pair, reversed(pair), found[1]):
        assert thing in alone and other not in alone


def test_two_questions_in_one_compare_nothing_and_split_before_a_preposition():
    assert compared("What is DRoC and how does it generate programs?") is None
    assert questions("What upper bound is derived, and at what head dimension does the rank saturate?") == [
        "What upper bound is derived",
        "at what head dimension does the rank saturate",
    ]


def test_a_comparison_has_one_part_per_paper_each_numbered():
    intent = parse("How does NEDAG differ from GPGapE in what it learns?")
    parts = plan(intent, [], [], searcher(NEDAG, GPGAPE))
    assert [(p.label, p.paper.id, p.number) for p in parts] == [
        ("NEDAG", "p-nedag", 1),
        ("GPGapE", "p-gpgape", 2),
    ]
    assert all(p.question == p.asked and p.label in p.question for p in parts)  # each asked alone


def test_a_paper_against_its_own_baseline_is_one_papers_question():
    # FlashX's abstract names FlashAttention-2: the other thing is its baseline, not a paper asked about.
    intent = parse("How much faster is FlashX compared with FlashAttention-2?")
    assert intent.compared
    assert plan(intent, [], [], searcher(FLASH, GPGAPE)) == []
    # Both things found in one paper: one paper's question too.
    assert plan(parse("How do NEDAG and NEDAG-2 each learn?"), [], [], searcher(NEDAG)) == []


def test_a_follow_up_is_answered_from_the_paper_just_cited():
    cited = Citation(1, NEDAG.id, NEDAG.title, "", [], NEDAG.abstract, 0, 10, 1.0)
    last = Answer(
        "What is NEDAG?", "NEDAG learns graphs [1].", [cited], [], False, [result(NEDAG)], Timings()
    )
    intent = parse("What do they learn?", [Turn("What is NEDAG?", last)])
    assert intent.about is not None and intent.about.id == NEDAG.id
    (part,) = plan(intent, [result(NEDAG)], [], searcher(GPGAPE))
    assert part.paper.id == NEDAG.id and part.asked == intent.question
    # Sources not narrowed to it (the question names something it lacks): one prompt, as before.
    assert plan(intent, [result(GPGAPE), result(NEDAG, 2)], [], searcher(GPGAPE)) == []


def test_a_two_part_question_is_answered_from_its_paper_and_a_named_second_paper():
    evidence = [Evidence(1, NEDAG, [])]
    intent = parse("What does NEDAG learn, and how does GPGapE explore?")
    parts = plan(intent, [result(NEDAG)], evidence, searcher(NEDAG, GPGAPE))
    assert [(p.paper.id, p.number) for p in parts] == [("p-nedag", 1), ("p-gpgape", 2)]
    one = plan(
        parse("What does NEDAG learn, and what graph does it use?"),
        [result(NEDAG)],
        evidence,
        searcher(GPGAPE),
    )
    assert [(p.paper.id, p.number) for p in one] == [("p-nedag", 1), ("p-nedag", 1)]


@pytest.mark.parametrize(
    "question", ["Which papers study graphs?", "Which paper learns weight matrices?", "What is NEDAG?"]
)
def test_lists_which_paper_and_simple_questions_take_one_prompt(question):
    assert plan(parse(question), [result(NEDAG)], [Evidence(1, NEDAG, [])], searcher(NEDAG, GPGAPE)) == []


def written(part: Part, text: str = "", refused: bool = False) -> Written:
    ev = Evidence(part.number, part.paper, [Sentence(0, len(part.paper.abstract), part.paper.abstract, None)])
    if refused:
        return Written(
            part, ev, "draft", {"abstained": True, "abstain_code": "selected_refusal", "trace": []}
        )
    citation = Citation(1, part.paper.id, part.paper.title, "", [], part.paper.abstract, 0, 5, 0.9)
    sentence = AnswerSentence(text, [1], True, 0.9)
    return Written(part, ev, text, {"sentences": [sentence], "citations": [citation], "trace": []})


def test_a_part_its_paper_does_not_answer_says_so_and_the_other_part_stays():
    a = Part("Q?", "Q a?", NEDAG, number=1, label="NEDAG")
    b = Part("Q?", "Q b?", GPGAPE, number=2, label="GPGapE")
    fields = compose([written(a, "NEDAG learns weight matrices."), written(b, refused=True)])
    assert not fields["abstained"]
    assert fields["text"].startswith("NEDAG learns weight matrices [1].")
    assert "does not state this for GPGapE" in fields["text"] and "GPGapE: bandits" in fields["text"]
    assert [c.paper_id for c in fields["citations"]] == ["p-nedag"]
    assert [p["cited"] for p in fields["parts"]] == [["p-nedag"], []]
    # The second paper's part, answered, is numbered after the first paper's.
    both = compose(
        [written(a, "NEDAG learns weight matrices."), written(b, "GPGapE uses Gaussian processes.")]
    )
    assert [(c.number, c.paper_id) for c in both["citations"]] == [(1, "p-nedag"), (2, "p-gpgape")]
    assert both["text"].endswith("GPGapE uses Gaussian processes [2].")


def test_an_answer_is_refused_only_when_no_part_is_answered():
    a, b = Part("Q?", "Q a?", NEDAG, label="NEDAG"), Part("Q?", "Q b?", GPGAPE, number=2, label="GPGapE")
    fields = compose([written(a, refused=True), written(b, refused=True)])
    assert fields["abstained"] and fields["citations"] == []
    assert "NEDAG" in fields["abstain_reason"] and "GPGapE" in fields["abstain_reason"]


PAPERS = [
    {"id": "p-nedag", "title": "NEDAG: Neural DAG Learning", "abstract": "NEDAG learns the weight matrices of a "
     "directed acyclic graph from observational data. It recovers causal graphs on ten benchmarks."},
    {"id": "p-gpgape", "title": "GPGapE: Gap Exploration for Bandits", "abstract": "GPGapE explores best-arm "
     "identification with Gaussian process posteriors. It needs fewer samples than uniform sampling."},
]  # fmt: skip


def test_each_part_is_written_from_its_own_paper_alone_in_the_order_asked(tmp_path, store, embedder):
    from rag.index.ingest import ingest
    from tests.conftest import write_jsonl

    folder = tmp_path / "papers"
    folder.mkdir()
    write_jsonl(folder / "p.jsonl", PAPERS)
    ingest([folder], store, embedder, chunk_tokens=60)
    replies = ["NEDAG learns the weight matrices of a directed acyclic graph [1].",
               "GPGapE uses Gaussian process posteriors [1]."]  # fmt: skip
    pipeline, llm = make_pipeline(
        store, embedder, replies, answer_stages=list(STAGES), parts={"enabled": True}
    )
    answer = pipeline.ask("How does NEDAG differ from GPGapE in what it learns or explores?")
    first, second = (m[-1]["content"] for m in llm.prompts[:2])
    assert "NEDAG" in first and "GPGapE" not in first.split("Question:")[0]
    assert "GPGapE" in second and "NEDAG: Neural" not in second
    assert [p["paper_id"] for p in answer.parts] == ["p-nedag", "p-gpgape"]
    assert all(set(p["cited"]) <= {p["paper_id"]} for p in answer.parts)
    assert answer.trace[0].stage == "parts" and any(t.stage == "select" for t in answer.trace)


def test_only_the_kinds_the_settings_name_are_answered_by_parts():
    evidence = [Evidence(1, NEDAG, [])]
    two_part = parse("What does NEDAG learn, and what graph does it use?")
    assert plan(two_part, [result(NEDAG)], evidence, searcher(NEDAG), kinds=("comparison",)) == []
    comparison = parse("How does NEDAG differ from GPGapE in what it learns?")
    assert plan(comparison, [], [], searcher(NEDAG, GPGAPE), kinds=("two_part",)) == []
    assert len(plan(comparison, [], [], searcher(NEDAG, GPGAPE), kinds=("comparison",))) == 2
