"""Carry an answer into notes: Markdown with numbered references, and BibTeX for the cited papers
(written with bibtexparser, so the output parses back)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from rag.types import Answer, Paper

_ARTICLE_VENUES = re.compile(r"arxiv|journal|transactions|letters|review", re.I)


def bibtex_key(paper: Paper) -> str:
    """Stable and readable: first author's surname, year, first title word, then a short hash of
    the paper id so two papers never share a key ("vaswani2017attention_3f2a")."""
    import hashlib

    surname = paper.authors[0].split()[-1] if paper.authors else "anon"
    word = next((w for w in re.findall(r"[A-Za-z]+", paper.title) if len(w) > 3), "paper")
    ascii_ = unicodedata.normalize("NFKD", f"{surname}{paper.year or ''}{word}").encode("ascii", "ignore")
    stem = re.sub(r"[^a-z0-9]", "", ascii_.decode().lower()) or "paper"
    return f"{stem}_{hashlib.sha1(paper.id.encode()).hexdigest()[:4]}"


def bibtex(papers: Iterable[Paper]) -> str:
    """One entry per paper: @article for arXiv and journals, else @inproceedings."""
    import bibtexparser
    from bibtexparser.library import Library
    from bibtexparser.model import Entry, Field

    library = Library()
    seen: set[str] = set()
    for paper in papers:
        if paper.id in seen:
            continue
        seen.add(paper.id)
        journal = not paper.venue or bool(_ARTICLE_VENUES.search(paper.venue))
        fields = [Field("title", "{" + _escape(paper.display_title) + "}")]
        if paper.authors:
            fields.append(Field("author", " and ".join(_escape(a) for a in paper.authors)))
        if paper.venue:
            fields.append(Field("journal" if journal else "booktitle", _escape(paper.venue)))
        if paper.year:
            fields.append(Field("year", str(paper.year)))
        if paper.url:
            fields.append(Field("url", paper.url))
        if paper.status:
            fields.append(Field("note", _escape(paper.status.capitalize())))
        library.add(Entry("article" if journal else "inproceedings", bibtex_key(paper), fields))
    return bibtexparser.write_string(library)


def _escape(text: str) -> str:
    """Braces are BibTeX syntax and `%`/`&` are LaTeX's: keep them from breaking the entry."""
    text = text.replace("{", "(").replace("}", ")")
    return re.sub(r"(?<!\\)([%&#_$])", r"\\\1", text)


def reference(number: int, paper: Paper) -> str:
    parts = [f"[{number}] {paper.display_title}."]
    if paper.authors:
        authors = ", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")
        parts.append(authors + ".")
    where = ", ".join(str(x) for x in (paper.venue, paper.status.capitalize() if paper.status else "") if x)
    if where or paper.year:
        venue_year = where + (f", {paper.year}" if paper.year and str(paper.year) not in where else "")
        parts.append(venue_year.strip(", ") + ".")
    if paper.url:
        parts.append(f"<{paper.url}>")
    return " ".join(parts)


def cited_papers(answer: Answer) -> list[tuple[int, Paper]]:
    """(number, paper) for each paper the answer cites, once, in citation order."""
    known = {r.paper.id: r.paper for r in answer.retrieved}
    known |= {ev.paper.id: ev.paper for ev in answer.evidence}
    out: dict[int, Paper] = {}
    for c in answer.citations:
        if c.number not in out:
            out[c.number] = known.get(c.paper_id) or Paper(c.paper_id, "", title=c.title, url=c.url)
    return sorted(out.items())


def markdown(answer: Answer) -> str:
    """The checked answer with its citation markers and a numbered reference list."""
    lines = [f"**Q:** {answer.question}", "", answer.text]
    refs = [] if answer.abstained else cited_papers(answer)
    if refs:
        lines += ["", "**References**", ""] + [reference(n, p) for n, p in refs]
    return "\n".join(lines) + "\n"


def papers_bibtex(answers: Sequence[Answer]) -> str:
    """BibTeX of every paper cited anywhere in `answers` (a conversation), each once."""
    return bibtex(p for a in answers for _, p in cited_papers(a))
