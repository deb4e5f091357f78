"""The baseline a user would build instead: a plain llama-index `VectorStoreIndex` over the same
Chroma collection and embedder, queried with its default query engine and the same LLM.

Our embedder and LLM are wrapped as llama-index components (not re-loaded), so the comparison
isolates what citewise adds: hybrid retrieval, evidence selection, the prompt, citation checking
and abstention.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms import CustomLLM
from llama_index.vector_stores.chroma import ChromaVectorStore
from pydantic import PrivateAttr

from rag.answer.pipeline import Turn
from rag.answer.trust import is_refusal
from rag.index.embedding import Embedder
from rag.index.store import Store
from rag.llm import LLM
from rag.text import sentence_spans
from rag.types import Answer, AnswerSentence, Citation, Timings


class WrappedEmbedding(BaseEmbedding):
    """Our `Embedder` as a llama-index embedding model."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any):
        super().__init__(model_name=embedder.model_id, **kwargs)
        self._embedder = embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embedder.embed(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embedder.embed(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


class WrappedLLM(CustomLLM):
    """Our `LLM` as a llama-index chat model; chat messages go through the model's own chat
    template (llama-index's LlamaCPP wrapper would apply a wrong prompt format)."""

    _llm: LLM = PrivateAttr()
    _max_tokens: int = PrivateAttr()
    _temperature: float = PrivateAttr()

    def __init__(self, llm: LLM, max_tokens: int, temperature: float, **kwargs: Any):
        super().__init__(**kwargs)
        self._llm, self._max_tokens, self._temperature = llm, max_tokens, temperature

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=True, model_name=self._llm.model, num_output=self._max_tokens)

    def _pieces(self, messages: list[dict[str, str]]):
        return self._llm.stream(messages, max_tokens=self._max_tokens, temperature=self._temperature)

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        msgs = [{"role": m.role.value, "content": m.content or ""} for m in messages]

        def gen() -> ChatResponseGen:
            text = ""
            for piece in self._pieces(msgs):
                text += piece
                yield ChatResponse(message=ChatMessage(role="assistant", content=text), delta=piece)

        return gen()

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        responses = list(self.stream_chat(messages))  # each holds the text so far
        return responses[-1] if responses else ChatResponse(message=ChatMessage(role="assistant", content=""))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        def gen() -> CompletionResponseGen:
            text = ""
            for piece in self._pieces([{"role": "user", "content": prompt}]):
                text += piece
                yield CompletionResponse(text=text, delta=piece)

        return gen()

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="".join(self._pieces([{"role": "user", "content": prompt}])))


class LlamaIndexBaseline:
    """Answers with llama-index defaults; returns our `Answer` so the same metrics apply. Its
    source nodes count as its citations (that is what its users see); its sentences carry no
    markers."""

    def __init__(self, store: Store, embedder: Embedder, llm: LLM, *, max_tokens: int, temperature: float):
        self.embed_model = WrappedEmbedding(embedder)
        self.index = VectorStoreIndex.from_vector_store(
            ChromaVectorStore(chroma_collection=store.collection), embed_model=self.embed_model
        )
        self.llm = llm
        self.engine = self.index.as_query_engine(llm=WrappedLLM(llm, max_tokens, temperature), streaming=True)
        self.store = store

    def rank(self, query: str, k: int) -> list[str]:
        nodes = self.index.as_retriever(similarity_top_k=k * 3).retrieve(query)
        ranked: list[str] = []
        for n in nodes:
            pid = n.node.metadata.get("paper_id", "")
            if pid and pid not in ranked:
                ranked.append(pid)
        return ranked[:k]

    def ask(self, question: str, history: Sequence[Turn] = ()) -> Answer:
        started = time.perf_counter()
        response = self.engine.query(question)  # the default engine has no chat history
        first_token, pieces = None, []
        for piece in response.response_gen:
            if first_token is None:
                first_token = time.perf_counter() - started
            pieces.append(piece)
        total = time.perf_counter() - started
        text = "".join(pieces).strip()
        abstained = not text or text == "Empty Response" or is_refusal(text)
        papers = self.store.papers([n.node.metadata.get("paper_id", "") for n in response.source_nodes])
        citations = []
        for i, n in enumerate(response.source_nodes, 1):
            paper = papers.get(n.node.metadata.get("paper_id", ""))
            if paper is None:
                continue
            citations.append(
                Citation(
                    i,
                    paper.id,
                    paper.title,
                    paper.url,
                    paper.sources,
                    n.node.get_content(),
                    0,
                    0,
                    n.score or 0.0,
                )
            )
        sentences = [AnswerSentence(text[s:e], [], False, 0.0) for s, e in sentence_spans(text)]
        return Answer(
            question=question,
            text=text,
            citations=[] if abstained else citations,
            sentences=[] if abstained else sentences,
            abstained=abstained,
            retrieved=[],
            timings=Timings(first_token=first_token, total=total),
            backend=self.llm.backend,
            model=self.llm.model,
            query=question,
        )
