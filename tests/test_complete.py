"""Complete answers: question parts, extractive completion of a missing part, paper names."""

import json

from rag.answer.citations import render_text as rendered
from rag.answer.complete import complete, missing_parts
from rag.question import read as parse
from rag.search.evidence import evidence_for
from rag.text import has_empty_slot
from rag.types import AnswerSentence, Citation, Paper
from tests.conftest import SEEDS
from tests.fakes import FakeEmbedder

ROWS = {r["id"]: r for r in map(json.loads, (SEEDS / "papers.jsonl").read_text().splitlines())}


def _source(pid: str, number: int = 1):
    row = ROWS[pid]
    ev = evidence_for(Paper(pid, row["abstract"], title=row["title"]), FakeEmbedder(), number)
    return ev


def _parts(question: str) -> list[str]:
    return list(parse(question).parts)


def alternatives(question: str) -> list[str]:
    return list(parse(question).alternatives)


def test_parts_of_real_questions():
    assert _parts("What Reward-Bench accuracy does RRM reach compared with the baseline?") == [
        "What Reward-Bench accuracy does RRM reach",
        "the baseline",
    ]
    assert _parts("How many recording hours and classes does BirdSet contain?") == [
        "How many recording hours",
        "How many classes",
    ]
    assert len(_parts("Why do LMs attend to the first token, and what variant removes it?")) == 2
    assert _parts("How does knowledge entropy change during pretraining?") == [
        "How does knowledge entropy change during pretraining"
    ]


def test_the_missing_half_of_a_comparison_is_quoted_from_the_source():
    ev = _source("88AS5MQnmC")
    answer = [AnswerSentence("RRM reaches 84.15% accuracy on Reward-Bench.", [1], True, 0.9)]
    cites = [Citation(1, "88AS5MQnmC", ROWS["88AS5MQnmC"]["title"], "", [], "", 0, 0, 0.9)]
    question = "What Reward-Bench accuracy does RRM reach compared with the baseline?"
    assert missing_parts(parse(question), answer[0].text)
    sentences, citations = complete(parse(question), answer, cites, [ev])
    text = rendered(sentences, citations)
    assert "80.61%" in text and text.count("[1]") == 2 and len(citations) == 1
    assert sentences[-1].checks[0].name == "quoted" and sentences[-1].text.startswith("“")
    # A complete answer is left alone.
    full = [AnswerSentence("RRM raises accuracy from 80.61% to 84.15% over the baseline.", [1], True, 0.9)]
    assert complete(parse(question), full, cites, [ev])[0] == full


def test_a_number_the_question_states_is_not_the_other_side_of_a_comparison():
    # The model's real answer: one number, plus the "2" of AlpacaEval-2 that the question gave.
    question = "What length-controlled AlpacaEval-2 win-rate does the RRM-aligned policy reach compared with the RM one?"
    answer = "The RRM-aligned policy reaches a length-controlled AlpacaEval-2 win-rate of 52.49% compared to the RM one."
    assert missing_parts(parse(question), answer)
    sentences, citations = complete(
        parse(question),
        [AnswerSentence(answer, [1], True, 0.9)],
        [Citation(1, "88AS5MQnmC", ROWS["88AS5MQnmC"]["title"], "", [], "", 0, 0, 0.9)],
        [_source("88AS5MQnmC")],
    )
    assert "33.46%" in rendered(sentences, citations)


def test_a_which_paper_answer_names_the_paper():
    cites = [Citation(1, "88AS5MQnmC", ROWS["88AS5MQnmC"]["title"], "", [], "", 0, 0, 0.9)]
    answer = [AnswerSentence("It learns preferences independent of artifacts.", [1], True, 0.9)]
    sentences, citations = complete(
        parse("Which paper makes reward models robust to artifacts?"), answer, cites, []
    )
    assert rendered(sentences, citations).startswith("The paper is “RRM: Robust Reward Model")
    named = [AnswerSentence("RRM learns preferences independent of artifacts.", [1], True, 0.9)]
    assert complete(parse("Which paper makes reward models robust?"), named, cites, [])[0] == named


def test_alternatives_of_a_several_papers_question():
    assert alternatives("Which papers study machine unlearning or forgetting knowledge?") == [
        "Which papers study machine unlearning?",
        "Which papers study forgetting knowledge?",
    ]
    # The second alternative's leading "for" is dropped, the first is as long as the second.
    assert alternatives(
        "Which papers use low-rank structure for zeroth-order fine-tuning or for visual prompting?"
    ) == [
        "Which papers use low-rank structure for zeroth-order fine-tuning?",
        "Which papers use low-rank structure for visual prompting?",
    ]
    # A third alternative is not carried into the first two.
    assert alternatives("Which papers recover 3D motion or 3D humans from video or a single image?") == [
        "Which papers recover 3D motion?",
        "Which papers recover 3D humans from video?",
    ]
    # "or" joining two predicates (a verb and its object) asks for each predicate.
    assert alternatives("Which papers prune vision transformers or distill CLIP with few labels?") == [
        "Which papers prune vision transformers?",
        "Which papers distill CLIP with few labels?",
    ]
    assert alternatives(
        "Which papers choose data by optimal control or give a recipe for tuning small LLMs?"
    ) == [
        "Which papers choose data by optimal control?",
        "Which papers give a recipe for tuning small LLMs?",
    ]
    # A noun phrase after "or" is not a predicate: "with masked image modeling", "problem instances".
    assert alternatives("Which papers learn from videos or with masked image modeling?") == []
    assert alternatives("Which papers generate synthetic training data or problem instances?") == [
        "Which papers generate synthetic training data?",
        "Which papers generate synthetic problem instances?",
    ]
    # One paper asked for, or no "or": nothing to split.
    assert alternatives("Which paper studies unlearning or forgetting?") == []
    assert alternatives("Which papers reduce the cost of pretraining language models?") == []


def test_a_several_papers_answer_names_each_paper_with_a_sentence_of_its_own():
    entropy, topic, washing = _source("eHehzSDUFp", 1), _source("dh78yRFVK9", 2), _source("dXCpPgjTtd", 3)
    question = "Which papers study machine unlearning or forgetting knowledge?"
    # The model's real draft: two titles, one marker, nothing said beyond the question.
    said = (
        f"The papers “{entropy.paper.title}” and “{topic.paper.title}” study machine unlearning or "
        "forgetting knowledge."
    )
    answer = [AnswerSentence(said, [1], True, 0.9)]
    cites = [Citation(1, "eHehzSDUFp", entropy.paper.title, "", [], "", 0, 0, 0.9)]
    sentences, citations = complete(parse(question), answer, cites, [entropy, topic, washing], FakeEmbedder())
    text = rendered(sentences, citations)
    assert said not in text  # the sentence that only repeats the question is replaced
    assert {c.paper_id for c in citations} >= {"eHehzSDUFp", "dh78yRFVK9"}
    for c in citations:  # every cited paper: its title, then a quoted sentence of its abstract
        own = [s for s in sentences if s.citations == [c.number]]
        assert own and own[0].text.startswith(f"“{c.title}”: “")
        quoted = own[0].text.split("”: “", 1)[1].rstrip("”.")
        assert quoted in ROWS[c.paper_id]["abstract"]
    assert not has_empty_slot(text)


def test_asked_which_papers_use_a_name_every_source_naming_it_is_described():
    # "Which papers test on Mistral?": the model's real draft cited two of the three sources that
    # name Mistral; the third is described too, quoting its sentence that names Mistral.
    lolcats, teal, stbllm = _source("8VtGeyJyx9", 1), _source("dGVZwyq5tV", 2), _source("6XUSDvBFkV", 3)
    answer = [AnswerSentence("The papers that test on Mistral are [1] and [3].", [1, 3], True, 0.9)]
    cites = [
        Citation(1, "8VtGeyJyx9", lolcats.paper.title, "", [], "", 0, 0, 0.9),
        Citation(3, "6XUSDvBFkV", stbllm.paper.title, "", [], "", 0, 0, 0.9),
    ]
    sources = [lolcats, teal, stbllm]
    sentences, citations = complete(
        parse("Which papers test on Mistral?"), answer, cites, sources, FakeEmbedder()
    )
    assert {c.paper_id for c in citations} == {"8VtGeyJyx9", "dGVZwyq5tV", "6XUSDvBFkV"}
    teal_number = next(c.number for c in citations if c.paper_id == "dGVZwyq5tV")
    own = [s.text for s in sentences if s.citations == [teal_number]]
    assert own and "Mistral" in own[0] and own[0].startswith(f"“{teal.paper.title}”: “")
    # A name that is only the setting of the question ("LLM inference") pulls no uncited source.
    setting = "Which papers make LLM inference cheaper through sparsity or compression?"
    sentences, citations = complete(parse(setting), answer, cites, sources, FakeEmbedder())
    assert "dGVZwyq5tV" not in {c.paper_id for c in citations}


PROOFS_OR_VIEWS = (
    "Which papers optimize formal proofs with an LLM agent or synthesize camera views off the "
    "recorded driving trajectory?"
)


def _proofs_and_views():
    """The two sources of the "proofs or views" question, the question, the proof paper's sentence
    on formal proofs, and both cited."""
    proofs, views = _source("dWsdJAXjQD", 1), _source("dTGH9vUVdf", 2)
    quoted = next(s.text for s in proofs.sentences if "formal proof" in s.text)
    cites = [
        Citation(1, "dWsdJAXjQD", proofs.paper.title, "", [], "", 0, 0, 0.9),
        Citation(2, "dTGH9vUVdf", views.paper.title, "", [], "", 0, 0, 0.9),
    ]
    return proofs, views, PROOFS_OR_VIEWS, quoted, cites


def test_a_paper_described_but_never_named_gets_its_name():
    # The model's real draft on a slower CPU: the first paper's sentence quoted, its name nowhere.
    proofs, views, question, quoted, cites = _proofs_and_views()
    answer = [
        AnswerSentence(f"The papers that optimize formal proofs are: “{quoted}” [1].", [1], True, 0.9),
        AnswerSentence(
            f"“{views.paper.title}” [2] synthesizes camera views on new trajectories.", [2], True, 0.9
        ),
    ]
    sentences, citations = complete(parse(question), answer, cites, [proofs, views], FakeEmbedder())
    text = rendered(sentences, citations)
    assert "ImProver" in text and "FreeVS" in text, text
    # The named paper is not described twice; the unnamed one keeps the model's sentence too.
    assert sum(s.citations == [2] for s in sentences) == 1
    assert any(s.text.startswith(f"“{proofs.paper.title}”: “") for s in sentences)
    assert len(citations) == 2


def test_a_list_that_alone_names_a_paper_stays():
    # The model's draft on CI's CPU: the proof paper described only by a bare quote and named only
    # in the sentence that lists both papers; that list must not go when the other paper gets its
    # own sentence, or the answer loses the proof paper's name.
    proofs, views, question, quoted, cites = _proofs_and_views()
    answer = [
        AnswerSentence(f"The papers that optimize formal proofs are: “{quoted}” [1].", [1], True, 0.9),
        AnswerSentence(f"They are “{proofs.paper.title}” and “{views.paper.title}”.", [1, 2], True, 0.9),
    ]
    sentences, _ = complete(parse(question), answer, cites, [proofs, views], FakeEmbedder())
    text = rendered(sentences, cites)
    assert "ImProver" in text and "FreeVS" in text, text
    assert any(s.text.startswith(f"“{views.paper.title}”: “") for s in sentences), text
