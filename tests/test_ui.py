from rag.answer.pipeline import Turn
from tests.conftest import make_pipeline
from ui.app import respond
from ui.render import esc, render_answer


def _run(pipeline, message, history=(), turns=None):
    return list(respond(message, list(history), 3, "fake", 0.1, turns, pipeline=pipeline))


def test_sources_come_first_then_streamed_text_then_cited_answer(indexed, embedder):
    pipeline, _ = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines as pretraining advances [1]."]
    )
    outputs = _run(pipeline, "How does knowledge entropy change during pretraining?")
    shown = [o[0][-1]["content"] for o in outputs]
    # A progress line from the first moment, naming each stage in turn until the answer replaces it.
    assert "Searching the papers" in shown[0] and "Sources found" not in shown[0]
    assert "Reading" in shown[1] and "Sources found" in shown[1] and "Knowledge Entropy Decay" in shown[1]
    stages = [
        next(s for s in ("Searching", "Reading", "Writing", "Checking") if s in text) for text in shown[:-1]
    ]
    assert list(dict.fromkeys(stages)) == ["Searching", "Reading", "Writing", "Checking"]
    first_token = next(i for i, text in enumerate(shown) if "Draft — being checked" in text)
    assert "Writing the answer" in shown[first_token - 1]  # said before the first token shows
    assert "Checking 1 sentences" in shown[-2] and "cw-progress" not in shown[-1]
    final, turns = outputs[-1]
    html = final[-1]["content"]
    assert 'class="cw-cite">[1]</a>' in html and "cw-source" in html and "<mark>" in html
    assert len(turns) == 1 and isinstance(turns[0], Turn)


def test_followup_shows_the_rewritten_query_and_keeps_sessions_apart(indexed, embedder):
    pipeline, _ = make_pipeline(
        indexed,
        embedder,
        ["Routing weights serve as embeddings [1].", "It improves benchmarks by 10.5 percent [1]."],
    )
    out1 = _run(pipeline, "Can mixture-of-experts routers be embeddings?")
    turns = out1[-1][1]
    history = [
        {"role": "user", "content": "Can mixture-of-experts routers be embeddings?"},
        {"role": "assistant", "content": "..."},
    ]
    out2 = _run(pipeline, "How much does it improve?", history, turns)
    note, answer = out2[-1][0]
    assert note["metadata"]["title"].startswith("Searched for") and "MoE Routers" in note["content"]
    assert "MoE Routers as Embeddings" in answer["content"]
    # The reading can be undone: its note asks the question again as a new one, read alone.
    assert (
        "ask as a new question" in answer["content"]
        and "New question: How much does it improve?" in answer["content"]
    )
    pipeline3, _ = make_pipeline(indexed, embedder, ["It improves benchmarks by 10.5 percent [1]."])
    out4 = _run(pipeline3, "New question: How much does it improve?", [*history, *history[:1]], turns)
    assert len(out4[-1][0]) == 1  # no rewrite note: asked without the conversation
    assert out4[-1][1][-1].question == "How much does it improve?" and len(out4[-1][1]) == 2
    # a cleared chat (empty history) drops the old turns: no cross-talk into a new conversation
    pipeline2, _ = make_pipeline(indexed, embedder, ["x"])
    out3 = _run(pipeline2, "How much does it improve?", [], turns)
    assert len(out3[-1][0]) == 1  # no rewrite note: nothing to refer back to


def test_errors_become_friendly_messages(indexed, embedder):
    pipeline, _ = make_pipeline(indexed, embedder, [RuntimeError("boom")])
    assert _run(pipeline, "")[-1][0][-1]["content"] == "**Sorry:** Please type a question."
    out = _run(pipeline, "How does knowledge entropy change during pretraining?")
    text = out[-1][0][-1]["content"]
    assert "something went wrong" in text and "Traceback" not in text and "boom" not in text


def test_refusal_lists_closest_papers(indexed, embedder):
    pipeline, _ = make_pipeline(indexed, embedder, ["Tungsten boils at 5555 degrees [1]."])
    text = _run(pipeline, "What is the boiling point of tungsten?")[-1][0][-1]["content"]
    assert "do not answer" in text and "Closest papers" in text


def test_paper_text_is_escaped_never_raw_html(indexed, embedder):
    pipeline, _ = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines as pretraining advances [1]."]
    )
    answer = pipeline.ask("How does knowledge entropy change during pretraining?")
    answer.citations[0].title = "<script>alert(1)</script>"
    answer.sentences[0].text = "<img src=x onerror=alert(1)>"
    html = render_answer(answer, "m1")
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html
    assert esc("[a](javascript:x)") == "\\[a\\](javascript:x)"


def test_sources_show_their_best_sentence_before_the_answer_streams(indexed, embedder):
    from tests.conftest import make_pipeline
    from ui.app import respond

    pipeline, _ = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines as pretraining advances [1]."]
    )
    steps = [
        m for m, _ in respond("How does knowledge entropy change?", [], 3, "auto", 0.0, [], pipeline=pipeline)
    ]
    first_with_preview = next(i for i, m in enumerate(steps) if "cw-preview" in m[-1]["content"])
    first_draft = next(i for i, m in enumerate(steps) if "being checked" in m[-1]["content"])
    assert first_with_preview < first_draft  # readable before the model writes
    assert "<mark>" in steps[first_with_preview][-1]["content"]


def test_every_answer_carries_its_exports_and_hides_internal_details(indexed, embedder):
    import html as html_lib
    import re

    import bibtexparser

    pipeline, _ = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines as pretraining advances [1]."]
    )
    final = _run(pipeline, "How does knowledge entropy change during pretraining?")[-1][0][-1]["content"]
    copy = re.search(r'<pre class="cw-md">([^<]*)</pre>', final)
    bib = re.search(r'<pre class="cw-bibtex">([^<]*)</pre>', final)
    assert copy and bib and ">Copy as Markdown<" in final and ">Download BibTeX (cited papers)<" in final
    markdown = html_lib.unescape(copy.group(1))
    assert "**References**" in markdown and "[1] Knowledge Entropy Decay." in markdown
    entries = bibtexparser.parse_string(html_lib.unescape(bib.group(1))).entries
    assert [e["title"] for e in entries] == ["{Knowledge Entropy Decay}"]
    assert "\n" not in copy.group(0)  # one line: Gradio's Markdown would end the HTML block
    # the source file and support score sit behind a toggle
    assert re.search(
        r"<details class=\"cw-details\"><summary>details</summary><small>from [^<]*support", final
    )


def test_filters_from_the_settings_panel_reach_the_search(indexed, embedder):
    pipeline, _ = make_pipeline(indexed, embedder, ["x"])
    seen = []
    original = pipeline.search
    pipeline.search = lambda *a, **kw: seen.append(kw.get("filters")) or original(*a, **kw)
    list(respond("knowledge entropy", [], 3, "auto", 0.0, [], ["ICLR 2025"], [], ["oral", "poster"],
                 pipeline=pipeline))  # fmt: skip
    assert seen[0] == {"venue": ("iclr 2025",), "status": ("oral", "poster")}
    seen.clear()
    list(respond("knowledge entropy", [], 3, "auto", 0.0, [], None, None, None, ["optimization"],
                 pipeline=pipeline))  # fmt: skip
    assert seen[0] and "area" in seen[0], seen


def test_labels_use_no_emoji_that_chromium_lacks(indexed, embedder):
    import inspect

    import ui.app
    import ui.render

    pipeline, _ = make_pipeline(indexed, embedder, ["Knowledge entropy declines [1]."])
    texts = [inspect.getsource(ui.app), inspect.getsource(ui.render)]
    texts += [m["content"] for out, _ in _run(pipeline, "How does knowledge entropy change?") for m in out]
    for text in texts:
        assert not [c for c in text if ord(c) >= 0x2190 and c not in "…—“”’"], (
            "a glyph Debian's fonts may lack"
        )


def test_the_stop_button_ends_the_generation(indexed, embedder):
    """Gradio's stop button closes the handler's generator; the model is then asked for no more
    tokens (a draft of 200 words is cut off after the first few)."""
    reply = " ".join(f"word{i}" for i in range(200)) + " [1]."
    pipeline, llm = make_pipeline(indexed, embedder, [reply])
    pulled: list[str] = []
    real = llm.stream

    def counting(*args, **kwargs):
        for token in real(*args, **kwargs):
            pulled.append(token)
            yield token

    llm.stream = counting
    handler = respond("How does knowledge entropy change?", [], 3, "fake", 0.0, [], pipeline=pipeline)
    for messages, _ in handler:
        if "Draft — being checked" in messages[-1]["content"]:
            break
    handler.close()  # what the stop button does to a running handler
    assert 0 < len(pulled) < 20, len(pulled)
