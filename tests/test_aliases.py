"""Acronym definitions from abstracts (rag/index/aliases.py), the keyword index's alias table kept
by difference (rag/index/keyword.py), and a topic's other names from it (rag/search/forms.py)."""

from __future__ import annotations

from rag.index.aliases import Alias, best_long_form, extract, form_key, is_short_form, singular
from rag.index.keyword import KeywordIndex
from rag.search.forms import alias_forms, senses


def pairs(text: str) -> list[tuple[str, str]]:
    return [(a.short, a.long) for a in extract(text)]


def test_a_plain_definition():
    assert pairs("We study physics-informed neural networks (PINNs) for PDEs.") == [
        ("PINN", "physics-informed neural networks")
    ]


def test_hyphens_inside_the_long_form():
    assert pairs("A self-supervised learning (SSL) objective.") == [("SSL", "self-supervised learning")]
    assert pairs("Sparse mixture-of-experts (MoE) layers.") == [("MoE", "mixture-of-experts")]
    assert pairs("We revisit the Kolmogorov-Arnold Network (KAN).") == [("KAN", "Kolmogorov-Arnold Network")]


def test_plurals_are_kept_singular_with_one_key():
    a, b = extract("Large Language Models (LLMs) and a large language model (LLM).")
    assert a.short == b.short == "LLM"
    assert a.key == b.key == form_key("large language model")
    assert singular("NeRFs") == "NeRF" and singular("MoS") == "MoS" and singular("GANs'") == "GAN"


def test_greek_letters():
    assert pairs("A β-variational autoencoder (β-VAE) is trained.") == [
        ("β-VAE", "β-variational autoencoder")
    ]


def test_nested_parentheses_and_citations():
    assert pairs("Neural radiance fields (NeRFs (Mildenhall et al., 2020)) render scenes.") == [
        ("NeRF", "Neural radiance fields")
    ]
    assert pairs("Self-supervised learning (SSL; Chen et al., 2020) helps.") == [
        ("SSL", "Self-supervised learning")
    ]


def test_the_reverse_order():
    assert pairs("PINNs (physics-informed neural networks) solve PDEs.") == [
        ("PINN", "physics-informed neural networks")
    ]
    # A parenthesis that says more than the long form is no definition.
    assert pairs("LLMs (which are trained on the web) hallucinate.") == []


def test_what_is_no_definition():
    assert pairs("Our method (ours) beats (i) this and (e.g., that), on ImageNet (Deng et al., 2009).") == []
    assert pairs("Accuracy rises (from 71.2 to 80.1) on GSM8K (2021).") == []
    assert not is_short_form("ours") and not is_short_form("2021") and is_short_form("GPT-4")
    # The first letter must start a word: "the tensor (NT)" defines nothing.
    assert best_long_form("NT", ["the", "tensor"]) == ""
    assert best_long_form("ECG", ["the", "electrocardiogram"]) == "electrocardiogram"


def test_a_definition_never_reaches_across_a_sentence_or_clause():
    assert pairs("We use graphs; neural networks (GNNs) follow.") == []
    assert pairs("Data matter. Graph neural networks (GNNs) follow.") == [("GNN", "Graph neural networks")]


def _index(tmp_path, docs: dict[str, str]) -> KeywordIndex:
    index = KeywordIndex(tmp_path)
    ids = list(docs)
    index.sync("1", lambda: ids, lambda wanted: [(c, docs[c], {}) for c in wanted])
    return index


def test_the_alias_table_follows_the_index_by_difference(tmp_path):
    docs = {
        "a::0": "Physics-informed neural networks (PINNs) solve PDEs.",
        "b::0": "We train a physics-informed neural network (PINN) on fluids.",
        "c::0": "Segment Anything Model (SAM) segments images.",
        "d::0": "Sharpness-aware minimization (SAM) finds flat minima.",
        "e::0": "The segment anything model (SAM) is prompted.",
    }
    index = _index(tmp_path, docs)
    assert index.long_forms("PINNs")[0][1:] == (form_key("physics-informed neural networks"), 2)
    assert [k for _, k, _ in index.long_forms("SAM")] == [
        form_key("segment anything model"),
        form_key("sharpness-aware minimization"),
    ]
    assert [(s, n) for s, _, n in index.short_forms(form_key("physics informed neural network"))] == [
        ("PINN", 2)
    ]
    # A paper removed takes its definitions with it; one added brings its own.
    docs.pop("b::0")
    docs["f::0"] = "Sharpness-Aware Minimization (SAM) again."
    index.sync("2", lambda: list(docs), lambda wanted: [(c, docs[c], {}) for c in wanted])
    assert index.long_forms("PINN")[0][2] == 1
    assert index.long_forms("SAM")[0][1:] == (form_key("segment anything model"), 2)
    assert index.long_forms("SAM")[1][1:] == (form_key("sharpness-aware minimization"), 2)


def test_a_topic_takes_the_senses_enough_papers_define(tmp_path):
    assert senses([("A", "k", 19), ("B", "l", 14), ("C", "m", 1)]) == [("A", "k", 19), ("B", "l", 14)]
    assert senses([("A", "k", 1)]) == [("A", "k", 1)]
    docs = {f"p{i}::0": "Physics-informed neural networks (PINNs) are used." for i in range(3)}
    docs["q::0"] = "Electrocardiogram (ECG) signals are read."
    index = _index(tmp_path, docs)
    forms = alias_forms(index, ["PINNs"])
    assert forms.long == ["Physics-informed neural networks"] and forms.acronyms == []
    assert alias_forms(index, ["electrocardiogram"]).acronyms == ["ECG"]
    # A phrase that already holds the acronym adds nothing.
    assert not alias_forms(index, ["ECG"]).acronyms


def test_alias_record():
    assert Alias("PINN", "Physics-Informed Neural Networks").key == form_key(
        "physics-informed neural network"
    )
