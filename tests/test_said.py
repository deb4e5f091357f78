"""Every row of the filter table (rag/question/said.py, docs/survey.md): each way of saying a status, an
area and a venue becomes the filter the index applies, and words that only look like one do not."""

from __future__ import annotations

import pytest

from rag.question.said import AREA_FORMS, STATUS_FORMS, said, shown_status

ACCEPTED = ("oral", "spotlight", "poster")

# (question, the statuses it states): before the noun, as the noun, after it, with "desk".
STATUS_ROWS = [
    ("Which accepted papers use LoRA?", ACCEPTED),
    ("accepted submissions on federated learning", ACCEPTED),
    ("Which oral papers study grokking?", ("oral",)),
    ("Give me the orals about video generation", ("oral",)),
    ("Which spotlight papers use diffusion?", ("spotlight",)),
    ("List the spotlights on model merging", ("spotlight",)),
    ("poster papers on graph transformers", ("poster",)),
    ("Which poster-track papers use SAM?", ("poster",)),
    ("Which rejected submissions work with point clouds?", ("submitted",)),
    ("Which rejected ICLR 2025 submissions deal with speech recognition?", ("submitted",)),
    ("papers on tabular data that got rejected", ("submitted",)),
    ("Which withdrawn papers use EEG?", ("withdrawn",)),
    ("Were any papers on world models withdrawn?", ("withdrawn",)),
    ("Which desk-rejected papers work on LLMs?", ("rejected",)),
    ("papers on protein design that were desk rejected", ("rejected",)),
    ("model editing papers that were accepted as a poster", ("poster",)),
    ("Which papers on KANs were accepted?", ACCEPTED),
]
# A negated status is every other status.
NOT_ACCEPTED = ("submitted", "withdrawn", "rejected")
NEGATED_ROWS = [
    ("papers on world models that were not accepted", NOT_ACCEPTED),
    ("Which submissions on KANs weren't accepted?", NOT_ACCEPTED),
    (
        "model merging papers that were not withdrawn",
        ("oral", "spotlight", "poster", "submitted", "rejected"),
    ),
    (
        "submissions on pruning that were not accepted, i.e. rejected or withdrawn?",
        ("submitted", "withdrawn"),
    ),
    ("papers on LoRA that were accepted, not withdrawn", ACCEPTED),
]


@pytest.mark.parametrize("question,statuses", NEGATED_ROWS)
def test_a_negated_status_is_every_other_status(question, statuses):
    assert set(said(question, "x", listing=True).filters.get("status")) == set(statuses)


@pytest.mark.parametrize("question,statuses", STATUS_ROWS)
def test_each_way_of_saying_a_status_is_the_stored_status(question, statuses):
    assert said(question, "x", listing=True).filters.get("status") == statuses


def test_every_status_of_the_table_is_tested():
    tested = {s for _, statuses in STATUS_ROWS for s in statuses}
    assert tested == {v for values in STATUS_FORMS.values() for v in values}


@pytest.mark.parametrize(
    "question",
    [
        "Is this result widely accepted?",  # not a list: a status after the noun is no filter
        "Why was the paper rejected?",
        "How does the oral cavity model work?",
    ],
)
def test_words_that_only_look_like_a_status_are_no_filter(question):
    assert "status" not in said(question, "", listing=False).filters


@pytest.mark.parametrize("value,names", AREA_FORMS)
def test_each_name_of_an_area_said_as_an_area_is_that_area(value, names):
    for name in names:
        assert said(f"Which papers in the {name} area study bandits?", "bandits", listing=True).filters[
            "area"
        ] == (value,), name
        assert said(
            f"What work in the {name} track uses transformers?", "transformers", listing=True
        ).filters["area"] == (value,), name


@pytest.mark.parametrize(
    "question,area",
    [
        (
            "Molecular docking papers in the physical sciences applications area",
            "applications to physical sciences",
        ),
        ("Which papers in the learning theory research track study bandits?", "learning theory"),
        ("Which RL papers in the safety track use world models?", "alignment, fairness, safety"),
    ],
)
def test_an_area_named_with_a_word_or_two_before_area_is_that_area(question, area):
    assert said(question, "x", listing=True).filters.get("area") == (area,)


@pytest.mark.parametrize(
    "question,topic,area",
    [
        ("Which learning theory papers study bandits?", "bandits", "learning theory"),
        ("Which RL papers use world models?", "world models", "reinforcement learning"),
        ("Which papers study RL?", "RL", None),  # the area word is the topic
        ("Which graphs papers study oversmoothing?", "oversmoothing", "learning on graphs"),
        ("Which papers use graphs?", "graphs", None),
    ],
)
def test_an_area_before_the_papers_is_a_filter_only_beside_another_topic(question, topic, area):
    assert said(question, topic, listing=True).filters.get("area") == ((area,) if area else None)


def test_a_venue_and_year_are_a_venue_filter():
    assert said("Which ICLR 2025 papers study grokking?", "grokking", listing=True).filters["venue"] == (
        "iclr 2025",
    )
    assert said("NeurIPS 2024 papers on model merging", "model merging", listing=True).filters["venue"] == (
        "neurips 2024",
    )


def test_statuses_are_shown_in_a_readers_words():
    assert [shown_status(s) for s in ("submitted", "rejected", "oral")] == [
        "rejected",
        "desk-rejected",
        "oral",
    ]


def test_the_rest_reads_as_a_question_without_the_status():
    assert said("Which oral papers use flow matching?", "flow matching", listing=True).rest == (
        "Which papers use flow matching?"
    )
    assert said("Give me the orals about video generation", "x", listing=True).rest == (
        "Give me the papers about video generation"
    )
