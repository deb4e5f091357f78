"""The chat page. `create_app(pipeline)` builds it, `main()` launches it; `respond` is a plain
generator that tests call directly with a fake pipeline."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

from rag.answer import AnswerEvent, InputError, Pipeline, PreviewEvent, SourcesEvent, TokenEvent, Turn
from rag.llm import LLMError
from rag.settings import Settings
from rag.store import StoreError
from ui.render import render_answer, render_sources_pending, render_streaming

log = logging.getLogger(__name__)

EXAMPLES = [
    "How does knowledge entropy change during language model pretraining?",
    "Can the routers of a mixture-of-experts LLM be used as an embedding model?",
    "What affects supervised fine-tuning of small LLMs?",
]
CSS = """
.cw-source { margin: 0.4em 0; padding: 0.3em 0.6em; border-left: 3px solid #8ab4f8; }
.cw-notfound summary { cursor: pointer; color: #b06000; }
.cw-cite { text-decoration: none; font-weight: 600; }
.cw-preview mark { background: #fff3c4; }
"""

Message = dict[str, Any]


def _query_note(query: str) -> Message:
    return {
        "role": "assistant",
        "content": query,
        "metadata": {"title": "🔎 Searched for (follow-up rewritten)"},
    }


def _reply(content: str, query: str, question: str) -> list[Message]:
    message = {"role": "assistant", "content": content}
    return [_query_note(query), message] if query != question else [message]


def llm_choices(settings: Settings, *, probe_ollama: bool = True) -> list[tuple[str, str]]:
    """(label, value) pairs for the model menu: the settings' choice, the shipped embedded
    models, the models pulled on the Ollama server when it is reachable, and the configured
    OpenAI-compatible model. Values are `backend:model` ("auto" keeps the settings)."""
    from rag.llm.models import SHIPPED
    from rag.llm.ollama import OllamaLLM

    choices = [(f"default ({settings.llm_backend})", "auto")]
    choices += [(f"embedded: {name}", f"llamacpp:{name}") for name in SHIPPED]
    try:
        pulled = (
            OllamaLLM(settings.ollama_host, settings.ollama_model, timeout=2).models() if probe_ollama else []
        )
    except LLMError:
        pulled = []
    choices += [(f"Ollama: {name}", f"ollama:{name}") for name in pulled]
    if settings.llm_backend == "openai":
        choices.append((f"OpenAI-compatible: {settings.openai_model}", f"openai:{settings.openai_model}"))
    return choices


def parse_choice(choice: str) -> tuple[str | None, str | None]:
    """`backend:model` -> (backend, model); "auto" or "" -> the settings' own."""
    if not choice or choice == "auto":
        return None, None
    backend, _, model = choice.partition(":")
    return backend, model or None


def respond(
    message: str,
    history: list[Message],
    k: float,
    llm_choice: str,
    temperature: float,
    turns: list[Turn] | None,
    *,
    pipeline: Pipeline,
) -> Iterator[tuple[list[Message], list[Turn]]]:
    """Yield (assistant messages, turns): sources first, then the streamed answer, then the
    rendered answer with citations. Never raises: errors become a friendly message."""
    # The chat may have been cleared or retried: keep only turns that are still on screen.
    asked = sum(1 for m in history if m.get("role") == "user")
    turns = list(turns or [])[:asked]
    msg_id = uuid.uuid4().hex[:8]
    question, query, results, text = message, message, [], ""
    previews: dict[str, str] = {}
    backend, model = parse_choice(llm_choice)
    try:
        for event in pipeline.stream(
            message, history=turns, k=int(k), backend=backend, model=model, temperature=float(temperature)
        ):
            if isinstance(event, SourcesEvent):
                query, results = event.query, event.results
                yield _reply(render_sources_pending(results), query, question), turns
            elif isinstance(event, PreviewEvent):
                previews = {ev.paper.id: sentence for ev, sentence in event.best()}
                yield _reply(render_sources_pending(results, previews), query, question), turns
            elif isinstance(event, TokenEvent):
                text += event.text
                yield _reply(render_streaming(text, results, previews), query, question), turns
            elif isinstance(event, AnswerEvent):
                answer = event.answer
                if not answer.error:
                    turns = [*turns, Turn(answer.question, answer)]
                yield _reply(render_answer(answer, msg_id), query, question), turns
    except InputError as exc:
        yield [{"role": "assistant", "content": f"⚠️ {exc}"}], turns
    except (StoreError, LLMError) as exc:
        yield [{"role": "assistant", "content": f"⚠️ {exc}"}], turns
    except Exception:  # the page must keep serving; the traceback goes to the server log
        log.exception("chat handler failed")
        yield (
            [
                {
                    "role": "assistant",
                    "content": "⚠️ Something went wrong while answering; "
                    "the error was logged on the server. Please try again.",
                }
            ],
            turns,
        )


def status_line(pipeline: Pipeline) -> str:
    try:
        stats = pipeline.store.stats()
        index = f"{stats['papers']} papers / {stats['chunks']} chunks"
    except StoreError as exc:
        index = f"unavailable ({exc})"
    s = pipeline.settings
    llm = {
        "auto": "auto (Ollama if reachable, else embedded)",
        "llamacpp": f"embedded {s.model}",
        "ollama": f"Ollama {s.ollama_model}",
        "openai": f"OpenAI-compatible {s.openai_model}",
    }
    return f"**Index:** {index} · **Embedder:** {pipeline.embedder.model_id} · **LLM:** {llm[s.llm_backend]}"


def create_app(pipeline: Pipeline):
    import gradio as gr

    s = pipeline.settings

    def chat_fn(message, history, k, llm_choice, temperature, turns):
        yield from respond(message, history, k, llm_choice, temperature, turns, pipeline=pipeline)

    def refresh_models():
        return gr.Dropdown(choices=llm_choices(s))

    with gr.Blocks(title="citewise") as demo:
        gr.Markdown("## citewise — ask the indexed papers\n" + status_line(pipeline), elem_id="cw-status")
        turns = gr.State([])
        with gr.Accordion("Settings", open=False):
            k = gr.Slider(1, 8, value=s.answer_k, step=1, label="Number of sources")
            with gr.Row():
                llm_choice = gr.Dropdown(
                    # Ollama is asked on page load (below), not while the app is built.
                    llm_choices(s, probe_ollama=False),
                    value="auto",
                    label="LLM backend / model",
                    scale=4,
                    elem_id="cw-model",
                )
                refresh = gr.Button("↻ list models", scale=1, size="sm")
            temperature = gr.Slider(0.0, 1.0, value=s.temperature, step=0.05, label="Temperature")
        gr.ChatInterface(
            chat_fn,
            chatbot=gr.Chatbot(height=560, label="citewise", elem_id="cw-chat"),
            additional_inputs=[k, llm_choice, temperature, turns],
            additional_outputs=[turns],
            # Only the question: the example buttons then sit in the empty chat, not in a table
            # of settings values.
            examples=[[e, None, None, None, None] for e in EXAMPLES],
            run_examples_on_click=True,
            cache_examples=False,
            api_name="chat",
            # One local model: queue questions (Gradio shows each user its queue position).
            concurrency_limit=1 if s.llm_backend in ("llamacpp", "auto") else 4,
        )
        # Ollama may be started after the page: list its models again on load and on demand.
        refresh.click(refresh_models, outputs=llm_choice, api_name=False)
        demo.load(refresh_models, outputs=llm_choice, api_name=False)
    return demo


def main(settings: Settings | None = None, *, block: bool = True):
    settings = settings or Settings()
    pipeline = Pipeline(settings)
    demo = create_app(pipeline)
    auth = tuple(settings.ui_auth.split(":", 1)) if settings.ui_auth else None
    demo.queue(default_concurrency_limit=4)
    demo.launch(
        server_name=settings.ui_host,
        server_port=settings.ui_port,
        share=settings.ui_share,
        auth=auth,
        css=CSS,
        prevent_thread_lock=not block,
        footer_links=["api"],
        quiet=not block,
    )
    return demo


if __name__ == "__main__":
    main()
