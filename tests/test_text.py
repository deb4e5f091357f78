"""The text toolkit on the seed abstracts and on the cases that broke the old splitter."""

import json

import pytest

from rag import question as qs
from rag import text as tx
from rag.text import coined_name, numbers, plain
from tests.conftest import SEEDS

ABSTRACTS = [json.loads(line)["abstract"] for line in (SEEDS / "papers.jsonl").read_text().splitlines()]


def test_sentences_do_not_break_after_abbreviations():
    text = "We use Tab. 2 and No. 3 w.r.t. the baseline. Then e.g. Fig. 4 shows it. See Eq. 5 et al. Next."
    assert tx.sentences(text) == [
        "We use Tab. 2 and No. 3 w.r.t. the baseline.",
        "Then e.g. Fig. 4 shows it.",
        "See Eq. 5 et al. Next.",
    ]


def test_every_seed_abstract_splits_into_whole_sentences():
    for abstract in ABSTRACTS:
        parts = tx.sentences(abstract)
        assert " ".join(parts).split() == abstract.split()  # nothing lost
        for part in parts:
            assert part[0].isupper() or part[0].isdigit() or part[0] in "\"'(*$\\_`", part
            assert not part.endswith((" e.g.", " i.e.", " et al.", " vs."))


def test_numbers_are_normalized():
    assert tx.numbers("over 6,800 hours, 1.53× and 84.15\\% with $\\uparrow17\\%$") == {
        "6800",
        "1.53",
        "84.15",
        "17",
    }
    assert tx.numbers("84.150 and 2.0") == {"84.15", "2"}
    assert tx.numbers("three tasks") == {"3"} and tx.numbers("three tasks", words=False) == set()
    assert tx.numbers("Llama3 and CIFAR10") == set()  # glued digits belong to names


def test_names_and_matching():
    found = tx.names("TEAL runs on Llama-3, GPT-4o and 405B models. Tested by MILP-Evolve on Waymo data.")
    assert {"TEAL", "Llama-3", "GPT-4o", "405B", "MILP-Evolve", "Waymo"} <= found
    assert "Tested" not in found and "The" not in tx.names("The model is big.")
    assert tx.name_in("LLMs", "large language models are big")
    assert tx.name_in("Llama-3", "the llama 3 family")
    assert not tx.name_in("RW", "a framework")


def test_content_words_are_stemmed_without_stop_words():
    assert tx.content_words("The improvements improved training-free models") == {
        "improv",
        "train",
        "free",
        "model",
    }
    assert tx.estimate_tokens("") == 1 and tx.estimate_tokens("one two three") > 3


def test_a_coined_name_is_not_the_lower_case_word_it_spells():
    # The Time-MoE abstract validates "scaling laws": it does not name LaW (Knowledge Washing).
    assert not tx.name_in("LaW", "we validate the applicability of scaling laws for training")
    assert tx.name_in("LaW", "We propose LaW, which updates the MLP layers")
    assert not tx.name_in("MoE", "moe is a word here") and tx.name_in("MoE", "a sparse MoE design")
    assert not tx.name_in("Time-MoE", "time-moe") and tx.name_in("Time-MoE", "Time-MoE scales")
    # Its lower-case parts still match, and acronyms still match the words they abbreviate.
    assert tx.name_in("BoN-aware", "our BoN-aware models learn")
    assert tx.name_in("MoE", "mixture-of-experts (MoE) routing")
    assert tx.name_in("LLMs", "large language models")


def test_empty_slots_where_a_name_was_are_detected():
    assert tx.has_empty_slot("The work by  claims that entropy declines [1].")
    assert tx.has_empty_slot("The papers that deal with unlearning are  and [1][2].")
    assert tx.has_empty_slot("It was proposed by .")
    assert not tx.has_empty_slot("The work by “Hyper-Connections” [1] claims that it helps.")


def test_follow_ups_about_the_paper_just_discussed():
    assert (
        qs.read("Which datasets did they use?").refers_back and qs.read("How fast is the method?").refers_back
    )
    assert not qs.read("Which datasets does TEAL use?").refers_back
    for question in (
        "Which base models did they test on?",
        "How fast is the method?",
        "Is this paper peer-reviewed?",
    ):
        assert qs.read(question).points_at_paper, question
    for question in (
        "Do other papers do this?",
        "How does it compare with LoRA?",
        "Which paper proposes a method that prunes networks?",
        "What is a method that reduces the KV cache?",
    ):
        assert not qs.read(question).points_at_paper, question


@pytest.mark.parametrize(
    "raw,shown",
    [
        ("improves by **70.84\\%** over", "improves by 70.84% over"),
        ("we propose $\\textbf{GameOpt}$, a method", "we propose GameOpt, a method"),
        ("a bound ($\\approx 0.63n$)", "a bound (≈ 0.63n)"),
        ("costs $5 and $6 more", "costs $5 and $6 more"),
        ("5 * 3 * 2 cells", "5 * 3 * 2 cells"),
    ],
)
def test_plain_renders_latex_and_markdown_as_a_reader_reads_them(raw, shown):
    assert plain(raw) == shown
    assert numbers(raw) == numbers(shown)  # the checks read both the same


@pytest.mark.parametrize(
    "title,abstract,name",
    [
        ("KV-Dict: Sparse caches", "We study caches.", "KV-Dict"),
        (
            "Games for design",
            "Old methods fail. To fix this, we propose $\\textbf{GameOpt}$, a game.",
            "GameOpt",
        ),
        ("Spot learning", "We propose a novel framework, Spotscape, which learns spots.", "Spotscape"),
        ("Tracking", "We propose a tracking paradigm via prompts, termed PromptTrack.", "PromptTrack"),
        (
            "Reduced data",
            "We propose identifying Reduced Datasets for Offline RL (ReDOR) by a search.",
            "ReDOR",
        ),
        ("Causal search", "We propose a new method for the CBO framework without a graph.", ""),
        ("A study", "We present a Gaussian Process (GP) approximation.", ""),
    ],
)
def test_coined_name_is_what_the_paper_calls_its_contribution(title, abstract, name):
    assert coined_name(title, abstract) == name


def test_an_amount_is_a_number_or_a_formula():
    assert tx.amounts("It needs $m = O(n)$ Gaussian measurements.") == {"$m=O(n)$"}
    assert tx.amounts("in O(n log n) time with three passes") == {"O(nlogn)", "3"}
    assert tx.amounts("Our model (ours) beats Olmo (the baseline).") == set()
    # The digits of a name are no amount; the same digits on their own are.
    assert tx.amounts("How many time points are in Time-300B for LLaMa2-7B?") == set()
    assert tx.amounts("Time-300B holds over 300 billion time points.") == {"300", "300000000000"}


def test_a_number_joined_to_a_word_by_a_hyphen_measures_nothing():
    assert tx.quantities("a two-phase approach with top-1 accuracy on GPT-4") == []
    assert [n for n, _, _ in tx.quantities("two phases, 1-2 points")] == ["2", "1", "2"]
    assert tx.scaled("7.5K QAs and 1.2 billion tokens") == {"7.5": "7500", "1.2": "1200000000"}
