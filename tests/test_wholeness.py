"""eval/wholeness.py: a shown sentence is a whole draft sentence or a whole quote of its own paper."""

from __future__ import annotations

from eval.wholeness import quotes_own_paper, whole_sentences
from rag.search.evidence import evidence_for
from rag.types import Answer, AnswerSentence, Citation, Paper, Timings
from tests.fakes import FakeEmbedder

A = Paper("p-a", "Routing weights serve as embeddings. The method improves benchmarks by 10.5 percent.",
          title="MoE Routers as Embeddings")  # fmt: skip
B = Paper("p-b", "Graph transformers struggle with large graphs. It scales to graphs with 100 million nodes.",
          title="Graph Transformers at Scale")  # fmt: skip
DRAFT = "The router weights of the method serve as embeddings without finetuning [1]."


def _answer(shown: list[AnswerSentence]) -> Answer:
    emb = FakeEmbedder()
    evidence = [evidence_for(A, emb, 1), evidence_for(B, emb, 2)]
    cites = [
        Citation(1, "p-a", A.title, "", [], "", 0, 0, 1.0),
        Citation(2, "p-b", B.title, "", [], "", 0, 0, 1.0),
    ]
    return Answer("q", " ".join(s.text for s in shown), cites, shown, False, [], Timings(), draft=DRAFT,
                  evidence=evidence)  # fmt: skip


def test_a_whole_draft_sentence_and_a_whole_quote_are_whole():
    answer = _answer([AnswerSentence(DRAFT, [1], True, 0.9),
                      AnswerSentence("“It scales to graphs with 100 million nodes”.", [2], True, 1.0)])  # fmt: skip
    assert whole_sentences(answer) is True and quotes_own_paper(answer) is True


def test_a_clause_cut_out_of_a_draft_sentence_is_a_fragment():
    answer = _answer([AnswerSentence("The router weights serve as embeddings [1].", [1], True, 0.9)])
    assert whole_sentences(answer) is False


def test_a_quote_under_another_papers_citation_is_caught():
    answer = _answer([AnswerSentence("“It scales to graphs with 100 million nodes”.", [1], True, 1.0)])
    assert quotes_own_paper(answer) is False
    assert whole_sentences(answer) is True  # a whole sentence, but of the wrong paper


def test_the_lines_of_a_list_draft_are_its_sentences():
    answer = _answer([AnswerSentence("Routing weights serve as embeddings [1].", [1], True, 0.9)])
    answer.draft = "The principle of each is as follows:\n- Routing weights serve as embeddings [1]"
    assert whole_sentences(answer) is True


def test_the_sentence_saying_a_part_is_not_answered_is_no_fragment():
    # An answer by parts writes it itself (claim=False); a cut draft clause beside it still fails.
    said = AnswerSentence("The abstract of “Graph Transformers at Scale” does not state this for GT.", [], True, 0.0,
                          claim=False)  # fmt: skip
    assert whole_sentences(_answer([AnswerSentence(DRAFT, [1], True, 0.9), said])) is True
    cut = AnswerSentence("The router weights serve as embeddings [1].", [1], True, 0.9)
    assert whole_sentences(_answer([cut, said])) is False
