"""Answer -> chat message HTML/Markdown. Every piece of paper or model text is escaped: an
abstract containing `<script>` shows as text, never runs."""

from __future__ import annotations

import csv
import html
import io
import re

from rag.answer.citations import draft_preview, render_text
from rag.export import bibtex, cited_papers, markdown
from rag.question.said import shown_status
from rag.text import plain
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


def render_sources_pending(results: list[SearchResult], previews: dict[str, str] | None = None) -> str:
    """Shown at once, while the model is still reading: the sources, and for each the sentence that
    best matches the question (`previews`: paper id -> sentence), once known."""
    if not results:
        return "_No indexed paper matches this question._"
    previews = previews or {}
    items = "\n".join(
        f"{r.rank}. {_link(r.paper.url, esc(r.paper.display_title))}"
        + (
            f'<br><small class="cw-preview"><mark>{html.escape(previews[r.paper.id])}</mark></small>'
            if r.paper.id in previews
            else ""
        )  # fmt: skip
        for r in results
    )
    return f"**Sources found** (the answer is being written…)\n\n{items}"


def progress(stage: str) -> str:
    """The line that says what the answer is waiting for (searching, reading, writing, checking),
    shown from the moment the question is asked until the checked answer replaces it."""
    return f'<sub class="cw-progress">{html.escape(stage)}</sub>\n\n'


def render_streaming(text: str, results: list[SearchResult], previews: dict[str, str] | None = None) -> str:
    """The draft as the model writes it: no citation marks yet, since none is checked."""
    return (
        f"<sub>Draft — being checked against the sources</sub>\n\n{esc(draft_preview(text))} …"
        f"\n\n---\n{render_sources_pending(results, previews)}"
    )


def render_not_found(answer: Answer) -> str:
    """The sentences removed because a check failed, collapsed, each with its failed checks."""
    if not answer.removed:
        return ""
    items = "".join(
        f"<li>{html.escape(s.text)}<br><small>"
        + html.escape(s.why_not or "no source backs it")
        + "</small></li>"
        for s in answer.removed
    )
    return (
        f'<details class="cw-notfound"><summary>Not found in the sources ({len(answer.removed)})</summary>'
        f"<ul>{items}</ul></details>\n"
    )


def render_doubted(answer: Answer) -> str:
    """The shown sentences the model's verdict found not stated by their source: marked, not hidden."""
    marked = [s for s in answer.sentences if s.doubted]
    if not marked:
        return ""
    items = "".join(
        f"<li>{html.escape(s.text)}<br><small>{html.escape(s.doubted)}</small></li>" for s in marked
    )
    return (
        f'<details class="cw-doubted"><summary>Not confirmed by the cited source ({len(marked)})</summary>'
        f"<ul>{items}</ul></details>\n"
    )


def _passage_html(c: Citation, abstract: str) -> str:
    """The cited passage with the supporting sentence highlighted and a little context."""
    if abstract and 0 <= c.start < c.end <= len(abstract):
        before = abstract[max(0, c.start - _CONTEXT) : c.start]
        after = abstract[c.end : c.end + _CONTEXT]
        lead = "…" if c.start > _CONTEXT else ""
        tail = "…" if c.end + _CONTEXT < len(abstract) else ""

        def h(text: str) -> str:
            return html.escape(plain(text))

        return f"{lead}{h(before)}<mark>{h(abstract[c.start : c.end])}</mark>{h(after)}{tail}"
    return f"<mark>{html.escape(plain(c.passage))}</mark>"


def _one_line(text: str) -> str:
    """Escaped text on one line: Gradio's Markdown ends an HTML block at a blank line, so line
    breaks travel as character references (the browser turns them back into line breaks)."""
    return html.escape(text, quote=True).replace("\n", "&#10;")


def render_export(answer: Answer) -> str:
    """The answer's "Copy as Markdown" and "Download BibTeX (cited papers)" buttons, each with its
    text in a hidden element beside it (Gradio's HTML sanitizer drops data attributes and
    handlers; ui/app.py's page-load hook reads the text and acts)."""
    papers = [p for _, p in cited_papers(answer)]
    parts = [
        f'<button class="cw-copy">Copy as Markdown</button><pre class="cw-md">{_one_line(markdown(answer))}</pre>'
    ]
    if papers:
        parts.append(
            '<button class="cw-bib">Download BibTeX (cited papers)</button>'
            f'<pre class="cw-bibtex">{_one_line(bibtex(papers))}</pre>'
        )
    return f'\n\n<div class="cw-export">{"".join(parts)}</div>\n'


def papers_csv(hits) -> str:
    """The survey list as CSV: rank, title, status, area, URL, the sentence that shows it fits."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["rank", "title", "status", "area", "url", "sentence"])
    for h in hits:
        p = h.paper
        writer.writerow(
            [h.rank, p.display_title, p.status, p.extra.get("primary_area", ""), p.url, h.sentence]
        )
    return out.getvalue()


THEME_SHOWS = 4  # papers shown under each theme; the table below has them all
TOPICS_SHOWN = 10


def render_themes(themes) -> str:
    """The list's themes (rag/map/themes.py): each theme's name, its count and its first papers,
    each with the sentence that shows it fits."""
    if not themes:
        return ""
    blocks = []
    for t in themes:
        items = "".join(
            f"<li>{_link(h.paper.url, html.escape(h.paper.display_title))} — “{html.escape(h.sentence)}”</li>"
            for h in t.hits[:THEME_SHOWS]
        )
        more = (
            f"<li><i>and {len(t.hits) - THEME_SHOWS} more in the table</i></li>"
            if len(t.hits) > THEME_SHOWS
            else ""
        )
        blocks.append(f'<div class="cw-theme"><b>{html.escape(t.name)}</b> · {len(t.hits)} '
                      f"paper{'' if len(t.hits) == 1 else 's'}<ul>{items}{more}</ul></div>")  # fmt: skip
    return f'<div class="cw-themes">{"".join(blocks)}</div>\n\n'


def _rows(hits) -> str:
    return "".join(
        f"<tr><td>{h.rank}</td><td>{_link(h.paper.url, html.escape(h.paper.display_title))}</td>"
        f"<td>{html.escape(shown_status(h.paper.status))}</td>"
        f"<td>{html.escape(h.paper.extra.get('primary_area', ''))}</td><td>{html.escape(h.sentence)}</td></tr>"
        for h in hits
    )


def render_list(sentence: str, hits, themes=(), near=()) -> str:
    """Every paper that fits a survey question: grouped by theme first (when the map has them),
    then as a compact table (title linked to its page, status in a reader's words, area, the
    sentence that shows it fits), exportable as CSV and BibTeX; the near-misses the judge cut
    behind "show N more"."""
    if not sentence:
        return ""
    head = "<tr><th>#</th><th>paper</th><th>status</th><th>area</th><th>why it fits</th></tr>"
    table = f'<table class="cw-list">{head}{_rows(hits)}</table>' if hits else ""
    if near:
        table += (
            f'<details class="cw-near"><summary>show {len(near)} more: they mention it, the judge read them as '
            f'not about it</summary><table class="cw-list">{head}{_rows(near)}</table></details>'
        )
    export = (
        '<div class="cw-export"><button class="cw-csv">Download CSV (the list)</button>'
        f'<pre class="cw-csv">{_one_line(papers_csv(hits))}</pre>'
        '<button class="cw-bib">Download BibTeX (the list)</button>'
        f'<pre class="cw-bibtex">{_one_line(bibtex([h.paper for h in hits]))}</pre></div>'
        if hits
        else ""
    )
    return f"**{esc(sentence)}**\n\n{render_themes(themes)}{table}{export}\n\n---\n"


def render_trace(answer: Answer) -> str:
    """What each answer stage did (the answer's trace), collapsed: stage, decision, sentence, why."""
    if not answer.trace:
        return ""
    rows = "".join(
        f"<li><b>{html.escape(t.stage)}</b> {html.escape(t.decision)}"
        + (f": “{html.escape(t.sentence[:160])}”" if t.sentence else "")
        + (f" <small>({html.escape(t.reason)})</small>" if t.reason else "")
        + "</li>"
        for t in answer.trace
    )
    return (
        f'<details class="cw-trace"><summary>details: how this answer was checked ({len(answer.trace)} steps)'
        f"</summary><ol>{rows}</ol></details>\n"
    )


def _details(text: str) -> str:
    """Internal details (source file, scores) behind a small toggle."""
    return f'<details class="cw-details"><summary>details</summary><small>{text}</small></details>'


def render_topics(answer: Answer) -> str:
    """A "biggest topics" answer: its first line, then a table of topics, counts and largest themes."""
    head = answer.text.split("\n", 1)[0]
    rows = "".join(
        f"<tr><td>{i}</td><td><b>{html.escape(t.name)}</b></td><td>{t.papers}</td><td>{t.share:.0%}</td>"
        f"<td>{html.escape('; '.join(f'{n} ({c})' for n, c in t.themes))}</td></tr>"
        for i, t in enumerate(answer.topics[:TOPICS_SHOWN], 1)
    )
    table = ('<table class="cw-list cw-topics"><tr><th>#</th><th>topic</th><th>papers</th><th>share</th>'
             f"<th>largest themes</th></tr>{rows}</table>")  # fmt: skip
    return (
        f"**{esc(head)}**\n\n{table}\n\n<sub>The Map tab shows every topic and paper.</sub>\n\n"
        + render_trace(answer)
    )


def render_similar(answer: Answer) -> str:
    """A "papers like <title>" answer: the nearest papers, each with its sentence nearest the paper."""
    head = answer.text.split("\n", 1)[0]
    items = "\n".join(
        f"{i}. {_link(s.paper.url, esc(s.paper.display_title))} <small>({s.similarity:.2f})</small>"
        f"<br><small>“{html.escape(s.sentence)}”</small>"
        for i, s in enumerate(answer.similar, 1)
    )
    return f"**{esc(head)}**\n\n{items}\n\n" + render_trace(answer)


def _like_button(title: str) -> str:
    """Asks "Papers like “<title>”" in the chat (the page's click listener, ui/app.py JS)."""
    return (f'<span class="cw-like"><button class="cw-like">similar papers</button>'
            f'<pre class="cw-like-q">Papers like “{html.escape(title)}”</pre></span>')  # fmt: skip


def render_answer(answer: Answer, msg_id: str) -> str:
    if answer.topics:
        return render_topics(answer)
    if answer.similar:
        return render_similar(answer)
    abstracts = {r.paper.id: r.paper.abstract for r in answer.retrieved}
    if answer.error:
        body = (
            f"**The language model failed:** {esc(answer.error)}\n\n"
            "The sources below were found for your question."
        )
        return body + "\n\n---\n" + render_closest(answer.retrieved)
    if answer.abstained:
        return (
            render_list(answer.listing, answer.papers, answer.themes, answer.near_misses)
            + f"**{esc(answer.text)}**\n\n<sub>{esc(answer.abstain_reason)}</sub>\n\n"
            + render_not_found(answer)
            + render_trace(answer)
            + "\n---\n"
            + render_closest(answer.retrieved)
        )
    listed = render_list(answer.listing, answer.papers, answer.themes, answer.near_misses)
    body = listed + render_text(
        answer.sentences,
        answer.citations,
        mark=lambda n: f'<a href="#{_anchor(msg_id, n)}" class="cw-cite">[{n}]</a>',
        escape=esc,
    )
    if answer.papers and not answer.sentences:  # the list is the answer; no summary was backed
        reason = f": {esc(answer.abstain_reason)}" if answer.abstain_reason else ""
        return (
            body
            + f"<sub>No summary of the list{reason}</sub>\n\n"
            + render_trace(answer)
            + "\n---\n"
            + render_closest(answer.retrieved)
        )
    lines = [
        body,
        "",
        render_doubted(answer),
        render_not_found(answer),
        render_trace(answer),
        "---",
        "**Sources**",
        "",
    ]
    for c in answer.citations:
        origin = ", ".join(c.sources)
        lines.append(
            f'<div id="{_anchor(msg_id, c.number)}" class="cw-source"><b>[{c.number}]</b> '
            f"{_link(c.url, html.escape(c.title))}<br><small>{_passage_html(c, abstracts.get(c.paper_id, ''))}"
            f"</small>{_details(f'from {html.escape(origin)} · support {c.score:.2f}')}{_like_button(c.title)}</div>\n"
        )
    if answer.invented_citations:
        lines.append(
            f"<sub>{answer.invented_citations} citation(s) to sources that were never "
            "offered were removed.</sub>"
        )
    return "\n".join(lines) + render_export(answer)


def render_closest(results: list[SearchResult]) -> str:
    if not results:
        return "_The index returned no papers._"
    items = "\n".join(
        f"{r.rank}. {_link(r.paper.url, esc(r.paper.display_title))} "
        + _details(html.escape(", ".join(r.paper.sources)))
        for r in results
    )
    return f"**Closest papers**\n\n{items}"
