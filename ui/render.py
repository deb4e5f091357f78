"""Answer -> chat message HTML/Markdown. Every piece of paper or model text is escaped: an
abstract containing `<script>` shows as text, never runs."""

from __future__ import annotations

import html
import re

from rag.types import Answer, Citation, SearchResult

_CONTEXT = 160


def esc(text: str) -> str:
    """Escape for Markdown context (HTML blocks use html.escape alone)."""
    # Escape Markdown's active characters too, so text can't become links or emphasis.
    return re.sub(r"([\\`*_\[\]#|~])", r"\\\1", html.escape(text, quote=True))


def _link(url: str, text: str) -> str:
    if url.startswith(("https://", "http://")):
        return f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener">{text}</a>'
    return text


def _anchor(msg_id: str, number: int) -> str:
    return f"cw-{msg_id}-{number}"


def render_sources_pending(results: list[SearchResult]) -> str:
    """Shown at once, while the model is still reading."""
    if not results:
        return "_No indexed paper matches this question._"
    items = "\n".join(f"{r.rank}. {_link(r.paper.url, esc(r.paper.display_title))}" for r in results)
    return f"**Sources found** (the answer is being written…)\n\n{items}"


def render_streaming(text: str, results: list[SearchResult]) -> str:
    return f"{esc(text)}▌\n\n---\n{render_sources_pending(results)}"


def _passage_html(c: Citation, abstract: str) -> str:
    """The cited passage with the supporting sentence highlighted and a little context."""
    if abstract and 0 <= c.start < c.end <= len(abstract):
        before = abstract[max(0, c.start - _CONTEXT) : c.start]
        after = abstract[c.end : c.end + _CONTEXT]
        lead = "…" if c.start > _CONTEXT else ""
        tail = "…" if c.end + _CONTEXT < len(abstract) else ""
        h = html.escape
        return f"{lead}{h(before)}<mark>{h(abstract[c.start : c.end])}</mark>{h(after)}{tail}"
    return f"<mark>{html.escape(c.passage)}</mark>"


def render_answer(answer: Answer, msg_id: str) -> str:
    abstracts = {r.paper.id: r.paper.abstract for r in answer.retrieved}
    if answer.error:
        body = (
            f"⚠️ **The language model failed:** {esc(answer.error)}\n\n"
            "The sources below were found for your question."
        )
        return body + "\n\n---\n" + render_closest(answer.retrieved)
    if answer.abstained:
        return f"**{esc(answer.text)}**\n\n<sub>{esc(answer.abstain_reason)}</sub>\n\n---\n" + render_closest(
            answer.retrieved
        )
    parts = []
    for s in answer.sentences:
        marks = "".join(f'<a href="#{_anchor(msg_id, n)}" class="cw-cite">[{n}]</a>' for n in s.citations)
        text = esc(s.text)
        if not s.supported:
            text = (
                f'<span class="cw-unsupported" title="No source supports this sentence">'
                f"{text} ⚠️<sup>unsupported</sup></span>"
            )
        parts.append(f"{text} {marks}".strip())
    lines = [" ".join(parts), "", "---", "**Sources**", ""]
    for c in answer.citations:
        origin = ", ".join(c.sources)
        lines.append(
            f'<div id="{_anchor(msg_id, c.number)}" class="cw-source"><b>[{c.number}]</b> '
            f"{_link(c.url, html.escape(c.title))}<br><small>{_passage_html(c, abstracts.get(c.paper_id, ''))}"
            f"</small><br><small>from {html.escape(origin)} · support {c.score:.2f}</small></div>\n"
        )
    if answer.invented_citations:
        lines.append(
            f"<sub>{answer.invented_citations} citation(s) to sources that were never "
            "offered were removed.</sub>"
        )
    return "\n".join(lines)


def render_closest(results: list[SearchResult]) -> str:
    if not results:
        return "_The index returned no papers._"
    items = "\n".join(
        f"{r.rank}. {_link(r.paper.url, esc(r.paper.display_title))} "
        f"<small>({esc(', '.join(r.paper.sources))})</small>"
        for r in results
    )
    return f"**Closest papers**\n\n{items}"
