"""The chat page. `create_app(pipeline)` builds it, `main()` launches it; `respond` is a plain
generator that tests call directly with a fake pipeline."""

from __future__ import annotations

import html
import logging
import uuid
from collections.abc import Iterator
from typing import Any

from rag import filters as flt
from rag.answer.events import CheckingEvent
from rag.answer.pipeline import (
    AnswerEvent,
    InputError,
    Pipeline,
    PreviewEvent,
    SourcesEvent,
    SurveyEvent,
    TokenEvent,
    Turn,
)
from rag.index.store import StoreError
from rag.llm import LLMError
from rag.settings import Settings
from ui.map_tab import EMPTY as EMPTY_MAP
from ui.map_tab import map_view, served_folders
from ui.render import progress, render_answer, render_list, render_sources_pending, render_streaming

log = logging.getLogger(__name__)

EXAMPLES = [
    "How does knowledge entropy change during language model pretraining?",
    "Can the routers of a mixture-of-experts LLM be used as an embedding model?",
    "What affects supervised fine-tuning of small LLMs?",
]
CSS = """
.cw-source { margin: 0.4em 0; padding: 0.3em 0.6em; border-left: 3px solid #8ab4f8; }
.cw-notfound summary, .cw-details summary, .cw-trace summary { cursor: pointer; color: #b06000; }
.cw-trace summary { color: #777; font-size: 0.85em; }
.cw-details summary { color: #777; font-size: 0.85em; }
.cw-cite { text-decoration: none; font-weight: 600; }
.cw-preview mark { background: #fff3c4; }
.cw-export button { margin: 0.5em 0.5em 0 0; padding: 0.15em 0.6em; border: 1px solid #bbb;
                    border-radius: 4px; background: #f6f6f6; cursor: pointer; font-size: 0.85em; }
.cw-export pre, .cw-like pre, .cw-fresh pre { display: none !important; }  /* the text the buttons carry */
.cw-like button, .cw-fresh button { margin-left: 0.4em; padding: 0 0.5em; border: 1px solid #bbb; border-radius: 4px;
                  background: #f6f6f6; cursor: pointer; font-size: 0.8em; }
.cw-list { font-size: 0.85em; border-collapse: collapse; }
.cw-theme { margin: 0.3em 0 0.6em; font-size: 0.92em; }
.cw-theme ul { margin: 0.2em 0 0 1.2em; padding: 0; }
.cw-list td, .cw-list th { padding: 0.2em 0.5em; vertical-align: top; border-bottom: 1px solid #eee;
                           word-break: normal !important; overflow-wrap: normal !important; hyphens: none; }
/* rank, status and area are short words: never broken ("spo / tlig / ht") */
.cw-list td:nth-child(1), .cw-list td:nth-child(3), .cw-list th { white-space: nowrap; }
.cw-list td:nth-child(2) { min-width: 14em; }
.cw-list td:nth-child(4) { min-width: 9em; }
.cw-list td:nth-child(5) { min-width: 16em; }
"""
# Gradio's HTML sanitizer keeps classes but drops data attributes and inline handlers: each export
# button has its text in a hidden <pre> beside it, and one delegated listener acts on the click. It
# is installed by the page-load hook (`js`): a <script> in `head` runs before Gradio replaces the
# document, and its listener is lost.
JS = """() => {
  // "similar papers" under a cited source: ask "Papers like <title>" in the chat; "ask as a new
  // question" under a follow-up's reading: ask it again without the conversation.
  document.addEventListener("click", (event) => {
    const button = event.target.closest("span.cw-like button.cw-like, span.cw-fresh button.cw-fresh");
    if (!button) return;
    event.preventDefault();
    askWhenFree(button.parentElement.querySelector("pre").textContent, 3000);
  }, true);
  // While an answer is still being finished the send button is not on the page (the stop button
  // is), and while its draft is being checked the chat says so: the question waits for both (up
  // to 10 minutes), or a click then would be lost.
  const busy = () => /being written|being checked/.test(document.querySelector("#cw-chat")?.innerText || "");
  const askWhenFree = (text, tries) => {
    const box = document.querySelector("#cw-tab-chat textarea");
    const send = document.querySelector("#cw-tab-chat button.submit-button");
    if (!box || !send || send.disabled || busy()) {
      if (tries > 0) setTimeout(() => askWhenFree(text, tries - 1), 200);
      return;
    }
    box.value = text;
    box.dispatchEvent(new Event("input", {bubbles: true}));
    // Gradio reads the box on its own input event; the send button is pressed once it has.
    setTimeout(() => document.querySelector("#cw-tab-chat button.submit-button")?.click(), 50);
  };
  document.addEventListener("click", async (event) => {
    const button = event.target.closest(".cw-export button.cw-copy, .cw-export button.cw-bib, .cw-export button.cw-csv");
    if (!button) return;
    event.preventDefault();
    const box = button.closest(".cw-export");
    if (button.classList.contains("cw-copy")) {
      const text = box.querySelector("pre.cw-md").textContent;
      try {
        await navigator.clipboard.writeText(text);
      } catch (e) {  // no clipboard permission: the old way
        const area = document.createElement("textarea");
        area.value = text; document.body.appendChild(area); area.select();
        document.execCommand("copy"); area.remove();
      }
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = label; }, 1500);
    } else {
      const csv = button.classList.contains("cw-csv");
      const text = box.querySelector(csv ? "pre.cw-csv" : "pre.cw-bibtex").textContent;
      const blob = new Blob([text], {type: csv ? "text/csv" : "application/x-bibtex"});
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = csv ? "citewise-papers.csv" : "citewise-references.bib";
      document.body.appendChild(link); link.click(); link.remove();
    }
  }, true);  // capture: nothing inside the chat can stop it first
}"""

Message = dict[str, Any]


# A question asked again with this in front is read without the conversation before it.
FRESH = "New question: "


def _query_note(query: str) -> Message:
    return {
        "role": "assistant",
        "content": query,
        "metadata": {"title": "Searched for (follow-up rewritten)"},
    }


def _undo(question: str) -> str:
    """The way back from a follow-up's reading: ask the question again as a new one."""
    return (f'<div><small>Read as a follow-up of the last answer.</small><span class="cw-fresh">'
            f'<button class="cw-fresh">ask as a new question</button><pre>{html.escape(FRESH + question)}</pre>'
            "</span></div>\n\n")  # fmt: skip


def _reply(content: str, query: str, question: str) -> list[Message]:
    if query == question:
        return [{"role": "assistant", "content": content}]
    return [_query_note(query), {"role": "assistant", "content": _undo(question) + content}]


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
    venue: list[str] | None = None,
    year: list[str] | None = None,
    status: list[str] | None = None,
    area: list[str] | None = None,
    *,
    pipeline: Pipeline,
) -> Iterator[tuple[list[Message], list[Turn]]]:
    """Yield (assistant messages, turns): sources first, then the streamed answer, then the
    rendered answer with citations. `venue`, `year`, `status` and `area` (the settings panel's choices)
    keep the sources within them. Never raises: errors become a friendly message."""
    # The chat may have been cleared or retried: keep only turns that are still on screen.
    asked = sum(1 for m in history if m.get("role") == "user")
    turns = list(turns or [])[:asked]
    fresh = message.startswith(FRESH)  # "ask as a new question": read without the turns before
    message = message[len(FRESH) :] if fresh else message
    msg_id = uuid.uuid4().hex[:8]
    question, query, results, text = message, message, [], ""
    previews: dict[str, str] = {}
    listed = ""  # the survey list, shown above everything else once found
    backend, model = parse_choice(llm_choice)
    filters = _panel_filters(venue, year, status, area)
    # Within a second of asking, on a slow CPU too: the page says what it is doing until the answer comes.
    yield _reply(progress("Searching the papers…"), query, question), turns
    try:
        for event in pipeline.stream(
            message,
            history=[] if fresh else turns,
            k=int(k),
            backend=backend,
            model=model,
            temperature=float(temperature),
            filters=filters,
        ):
            if isinstance(event, SourcesEvent):
                query, results = event.query, event.results
                stage = progress(f"Reading {len(results)} sources…")
                yield _reply(stage + render_sources_pending(results), query, question), turns
            elif isinstance(event, SurveyEvent):
                listed = render_list(event.sentence, event.hits, event.themes)
                yield _reply(listed + render_sources_pending(results), query, question), turns
            elif isinstance(event, PreviewEvent):
                previews = {ev.paper.id: sentence for ev, sentence in event.best()}
                stage = progress("Writing the answer…")
                yield (
                    _reply(listed + stage + render_sources_pending(results, previews), query, question),
                    turns,
                )
            elif isinstance(event, TokenEvent):
                text += event.text
                stage = progress("Writing the answer…")
                yield (
                    _reply(listed + stage + render_streaming(text, results, previews), query, question),
                    turns,
                )
            elif isinstance(event, CheckingEvent):
                stage = progress(f"Checking {event.sentences} sentences against their sources…")
                yield (
                    _reply(listed + stage + render_streaming(text, results, previews), query, question),
                    turns,
                )
            elif isinstance(event, AnswerEvent):
                answer = event.answer
                if not answer.error:
                    turns = [*turns, Turn(answer.question, answer)]
                yield _reply(render_answer(answer, msg_id), query, question), turns
    except (InputError, StoreError, LLMError) as exc:
        yield [{"role": "assistant", "content": f"**Sorry:** {exc}"}], turns
    except Exception:  # the page must keep serving; the traceback goes to the server log
        log.exception("chat handler failed")
        yield (
            [
                {
                    "role": "assistant",
                    "content": "**Sorry:** something went wrong while answering; "
                    "the error was logged on the server. Please try again.",
                }
            ],
            turns,
        )


def status_line(pipeline: Pipeline, filters: flt.Filters | None = None) -> str:
    try:
        stats = pipeline.store.stats()
        index = f"{stats['papers']:,} papers / {stats['chunks']:,} chunks"
    except StoreError as exc:
        index = f"unavailable ({exc})"
    s = pipeline.settings
    llm = {
        "auto": "auto (Ollama if reachable, else embedded)",
        "llamacpp": f"embedded {s.model}",
        "ollama": f"Ollama {s.ollama_model}",
        "openai": f"OpenAI-compatible {s.openai_model}",
    }
    active = flt.describe(filters) or "none"
    return (
        f"**Index:** {index} · **Filters:** {active} · **Embedder:** {pipeline.embedder.model_id} · "
        f"**LLM:** {llm[s.llm_backend]}"
    )


def _panel_filters(venue=None, year=None, status=None, area=None) -> flt.Filters:
    """The settings panel's choices as filters (an empty choice is no filter)."""
    return flt.from_mapping({"venue": venue, "year": year, "status": status, "area": area})


def header(pipeline: Pipeline, venue=None, year=None, status=None, area=None) -> str:
    return "## citewise — ask the indexed papers\n" + status_line(
        pipeline, _panel_filters(venue, year, status, area)
    )


def facets(pipeline: Pipeline) -> dict[str, list[str]]:
    try:
        return pipeline.store.facets()
    except StoreError:
        return {k: [] for k in flt.KEYS}


def settings_panel(s: Settings, values: dict[str, list[str]]):
    """The chat's folded panel: the filters, the number of sources, the model and its temperature."""
    import gradio as gr

    with gr.Accordion("Settings and filters", open=False, elem_id="cw-settings"):
        with gr.Row():
            venue = gr.Dropdown(values["venue"], multiselect=True, label="Venue", elem_id="cw-venue")
            year = gr.Dropdown(values["year"], multiselect=True, label="Year", elem_id="cw-year")
            status = gr.Dropdown(
                values["status"], multiselect=True, label="Status", elem_id="cw-status-filter"
            )
            area = gr.Dropdown(values["area"], multiselect=True, label="Primary area", elem_id="cw-area")
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
            refresh = gr.Button("List models again", scale=1, size="sm")
        temperature = gr.Slider(0.0, 1.0, value=s.temperature, step=0.05, label="Temperature")
    return venue, year, status, area, k, llm_choice, refresh, temperature


def create_app(pipeline: Pipeline):
    import gradio as gr

    s = pipeline.settings

    def chat_fn(message, history, k, llm_choice, temperature, turns, venue, year, status, area):
        yield from respond(message, history, k, llm_choice, temperature, turns, venue, year, status, area,
                           pipeline=pipeline)  # fmt: skip

    def refresh_models():
        return gr.Dropdown(choices=llm_choices(s))

    def refresh_filters(venue, year, status, area):
        values = facets(pipeline)
        return (
            gr.Dropdown(choices=values["venue"]),
            gr.Dropdown(choices=values["year"]),
            gr.Dropdown(choices=values["status"]),
            gr.Dropdown(choices=values["area"]),
            header(pipeline, venue, year, status, area),
        )

    values = facets(pipeline)
    # fill_height: the conversation takes the window's height, not a fixed box in the middle.
    with gr.Blocks(title="citewise", fill_height=True) as demo:
        status_md = gr.Markdown(header(pipeline), elem_id="cw-status")
        with gr.Tab("Chat", elem_id="cw-tab-chat", scale=1):
            turns = gr.State([])
            venue, year, status, area, k, llm_choice, refresh, temperature = settings_panel(s, values)
            gr.ChatInterface(
                chat_fn,
                # Inside a tab, fill_height no longer reaches the chat: it takes the window's height itself
                # (the window less the header, the tabs, the settings bar and the message box).
                chatbot=gr.Chatbot(
                    label="citewise", elem_id="cw-chat", scale=1, height="calc(100vh - 340px)", min_height=360
                ),  # fmt: skip
                additional_inputs=[k, llm_choice, temperature, turns, venue, year, status, area],
                additional_outputs=[turns],
                # Only the question: the example buttons then sit in the empty chat, not in a table
                # of settings values.
                examples=[[e, None, None, None, None, None, None, None, None] for e in EXAMPLES],
                run_examples_on_click=True,
                cache_examples=False,
                api_name="chat",
                fill_height=True,
                # One local model: queue questions (Gradio shows each user its queue position).
                concurrency_limit=1 if s.llm_backend in ("llamacpp", "auto") else 4,
            )
        with gr.Tab("Map", elem_id="cw-tab-map", scale=1) as map_tab:
            map_html = gr.HTML(EMPTY_MAP, elem_id="cw-map")
        # Laid out on first opening if the index changed since (ingest usually did it already).
        map_tab.select(lambda: map_view(pipeline), None, map_html, api_name=False)
        filters = [venue, year, status, area]
        for box in filters:
            box.change(lambda v, y, st, a: header(pipeline, v, y, st, a), filters, status_md,
                       api_name=False)  # fmt: skip
        # Ollama may be started after the page, papers ingested meanwhile: list both again on load.
        refresh.click(refresh_models, outputs=llm_choice, api_name=False)
        demo.load(refresh_models, outputs=llm_choice, api_name=False)
        demo.load(refresh_filters, filters, [*filters, status_md], api_name=False)
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
        share=False,
        auth=auth,
        css=CSS,
        js=JS,
        prevent_thread_lock=not block,
        footer_links=["api"],
        allowed_paths=served_folders(pipeline),  # the Map tab's page
        quiet=not block,
    )
    return demo


if __name__ == "__main__":
    main()
