"""The conversation's follow-up decision (rag/question/conversation.py) with its shipped weights:
a question that points back is bound to the paper it means, one whose "they" points inside itself
is not, and a pronoun alone decides only when the decision is switched off."""

from rag.question import FollowUp, Kind, read
from rag.question.conversation import Last
from rag.search.survey import SurveyHit
from rag.types import Answer, Citation, Paper, SearchResult, Timings, Turn

ROUTERS = Paper("p-routers", "Mixture-of-experts routers carry semantic signals. Routing weights serve as "
                "embeddings without finetuning and improve embedding benchmarks by 10 percent.",
                title="Your MoE Router Is Secretly an Embedding Model")  # fmt: skip
ENTROPY = Paper("p-entropy", "We introduce knowledge entropy. It declines as pretraining advances, which "
                "impairs knowledge acquisition and retention.", title="Knowledge Entropy Decay in Pretraining")  # fmt: skip
SERIES = Paper("p-series", "Time-MoE is a mixture-of-experts foundation model for time series, pre-trained on "
               "Time-300B with over 300 billion time points.", title="Time-MoE: Time Series Foundation Models")  # fmt: skip


def _cited(paper: Paper, question: str) -> Turn:
    cite = Citation(1, paper.id, paper.title, "", [], "", 0, 0, 1.0)
    return Turn(
        question, Answer(question, "", [cite], [], False, [SearchResult(1, paper, 1.0, [])], Timings())
    )


def _listed(papers, question: str) -> Turn:
    hits = [SurveyHit(i, p, "") for i, p in enumerate(papers, 1)]
    return Turn(question, Answer(question, "", [], [], False, [], Timings(), papers=hits))


DECIDE = FollowUp.shipped()


def test_a_question_that_points_back_is_bound_to_the_paper_just_cited():
    history = [_cited(ROUTERS, "Can MoE routers be embeddings?")]
    intent = read("Which datasets did they use?", history, follow=DECIDE)
    assert (
        intent.follows and intent.kind is Kind.FOLLOW_UP and [p.id for p in intent.referents] == ["p-routers"]
    )
    assert intent.about is not None and "(about: Your MoE Router" in intent.query
    assert intent.follow_p is not None and intent.follow_p >= DECIDE.threshold and intent.follow_why


def test_a_question_whose_they_points_inside_itself_stands_alone():
    history = [_cited(ROUTERS, "Can MoE routers be embeddings?")]
    question = (
        "Which paper introduces knowledge entropy, and what do they find happens to it during pretraining?"
    )
    intent = read(question, history, follow=DECIDE)
    assert not intent.follows and intent.referents == () and intent.about is None and intent.query == question
    # The pronoun rule it replaces binds it to the last paper.
    assert read(question, history).follows


def test_after_a_list_a_follow_up_means_the_paper_it_counts_to_or_all_of_them():
    history = [_listed([ROUTERS, SERIES, ENTROPY], "Which papers study mixture of experts?")]
    second = read("What does the second one pre-train on?", history, follow=DECIDE)
    assert second.follows and [p.id for p in second.referents] == ["p-series"]
    group = read("Which of them report a speed-up?", history, follow=DECIDE)
    assert group.follows and [p.id for p in group.referents] == ["p-routers", "p-series", "p-entropy"]


def test_the_first_question_follows_nothing():
    assert not read("Which datasets did they use?", [], follow=DECIDE).follows
    assert Last.of([]) is None
