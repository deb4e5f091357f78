"""Read paper files into `Paper`s, with per-file and per-record errors: the seed format, JSONL
and JSON (generic records, OpenReview API notes, the arXiv metadata snapshot), BibTeX with
abstracts, CSV, and .txt/.md. JSON, JSONL and BibTeX are told apart by their content.

A `papers.jsonl` beside other files in a folder is a metadata sidecar: it enriches the bare
abstracts of that folder (title, id, URL, ...) by `file#index` or by normalized abstract text.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.index import formats
from rag.text import strip_control
from rag.types import Paper

SIDECAR_NAME = "papers.jsonl"
SUPPORTED = {".txt", ".md", ".jsonl", ".json", ".bib", ".csv"}
# Compressed JSON Lines (the way a conference dump ships: iclr2025_abstracts.jsonl.gz) are read as
# they are, streamed.
GZIP = ".jsonl.gz"
MAX_FILE_BYTES = 200 * 1024 * 1024
MAX_ABSTRACT_CHARS = 100_000

_FIELD_ALIASES = {
    "abstract": ("abstract", "text", "summary", "content"),
    "title": ("title", "name"),
    "id": ("id", "openreview_id", "paper_id", "forum"),
    "url": ("url", "link", "pdf_url"),
    "authors": ("authors", "author"),
    "year": ("year",),
    "venue": ("venue", "conference"),
    "status": ("status", "decision"),
}
_KNOWN = {alias for aliases in _FIELD_ALIASES.values() for alias in aliases} | {"occurrences"}


@dataclass
class ReadError:
    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class ReadReport:
    papers: list[Paper] = field(default_factory=list)
    errors: list[ReadError] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)  # labels, as in `file#index`


def clean_text(text: str) -> str:
    """Drop control characters and collapse whitespace (what we store and show)."""
    return re.sub(r"\s+", " ", strip_control(unicodedata.normalize("NFC", text))).strip()


def normalize_text(text: str) -> str:
    """The key two copies of one abstract share: case, Unicode form and spacing removed."""
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text)).strip()


def text_id(text: str) -> str:
    """Stable id for a paper with no known id: a hash of its normalized abstract."""
    return "h-" + hashlib.sha256(normalize_text(text).encode()).hexdigest()[:16]


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Files downloaded from old tools are often cp1252; latin-1 never fails.
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def _read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"file is {size / 2**20:.0f} MB, over the {MAX_FILE_BYTES // 2**20} MB limit")
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ValueError("binary file (not text), skipped")
    text = _decode(data)
    if not text.strip():
        raise ValueError("empty file")
    return text


def _pick(row: dict[str, Any], name: str) -> Any:
    for alias in _FIELD_ALIASES[name]:
        value = row.get(alias)
        if value not in (None, ""):
            return value
    return None


def _authors(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [clean_text(str(a)) for a in value if str(a).strip()]
    sep = ";" if ";" in str(value) else ","
    return [clean_text(a) for a in str(value).split(sep) if a.strip()]


def _year(value: Any) -> int | None:
    try:
        return int(str(value).strip()[:4]) if value not in (None, "") else None
    except ValueError:
        return None


def _status(value: Any) -> str:
    """ "oral", "spotlight", "poster", ... from "ICLR 2025 Oral" or "oral"; other text as written."""
    if value in (None, ""):
        return ""
    _, status = formats.venue_status(str(value))
    return status or clean_text(str(value)).lower()


def _venue_of_status(value: Any) -> str:
    """ "ICLR 2025" from an OpenReview status such as "ICLR 2025 Poster" or "Submitted to ICLR
    2025", when the record has no venue of its own."""
    if not value or not re.search(r"\b(19|20)\d{2}\b", str(value)):
        return ""
    return formats.venue_status(str(value))[0]


def paper_from_record(row: dict[str, Any], source: str) -> Paper:
    """Map a JSON/CSV record onto a Paper; unknown fields are kept in `extra`."""
    abstract = _pick(row, "abstract")
    abstract = clean_text(abstract) if isinstance(abstract, str) else ""
    if not abstract:
        raise ValueError("record has no abstract (expected a field named 'abstract' or 'text')")
    if len(abstract) > MAX_ABSTRACT_CHARS:
        raise ValueError(f"abstract is {len(abstract)} characters, over {MAX_ABSTRACT_CHARS}")
    pid = _pick(row, "id")
    return Paper(
        id=clean_text(str(pid)) if pid else text_id(abstract),
        abstract=abstract,
        title=clean_text(str(_pick(row, "title") or "")),
        url=clean_text(str(_pick(row, "url") or "")),
        authors=_authors(_pick(row, "authors")),
        year=_year(_pick(row, "year")),
        venue=clean_text(str(_pick(row, "venue") or "")) or _venue_of_status(_pick(row, "status")),
        status=_status(_pick(row, "status")),
        sources=[source],
        extra={k: v for k, v in row.items() if k not in _KNOWN and v not in (None, "")},
    )


def _blocks(text: str) -> list[str]:
    return [b.strip() for b in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")) if b.strip()]


def read_plain(path: Path, label: str, report: ReadReport) -> None:
    """`.txt`: the seed format (a header line, then blank-line-separated abstracts) when a
    short header is followed by two or more blocks. Otherwise, and always for `.md`, one paper,
    titled by a short first line or a Markdown heading."""
    blocks = _blocks(_read_text(path))
    header = blocks[0]
    short_header = "\n" not in header and len(header) < 120 and not header.endswith(".")
    if path.suffix.lower() == ".txt" and short_header and len(blocks) >= 3:
        for index, block in enumerate(blocks[1:]):
            report.papers.append(paper_from_record({"abstract": block}, f"{label}#{index}"))
        return
    title = ""
    if short_header and len(blocks) >= 2:
        title, blocks = header.lstrip("# ").strip(), blocks[1:]
    report.papers.append(paper_from_record({"abstract": "\n".join(blocks), "title": title}, f"{label}#0"))


def json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object) for each non-blank line, or (line number, error) when the line is
    not a JSON object. Streams, so a large file is never held in memory."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"file is over the {MAX_FILE_BYTES // 2**20} MB limit")
    with _open(path) as fh:
        lineno = 0
        try:
            if b"\x00" in fh.read(8192):
                raise ValueError("binary file (not text), skipped")
            fh.seek(0)
        except EOFError:  # a gzip file cut short within its first block
            yield 1, "the compressed file ends early (truncated)"
            return
        lines = enumerate(fh, 1)
        while True:
            try:
                lineno, raw = next(lines)
            except StopIteration:
                return
            except EOFError:  # a gzip file cut short: what was read stays read
                yield lineno + 1, "the compressed file ends early (truncated)"
                return
            line = _decode(raw)
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield lineno, f"malformed JSON ({exc.msg})"
                continue
            yield lineno, row if isinstance(row, dict) else "line is not a JSON object"


def _records(
    path: Path, label: str, report: ReadReport, rows: Iterator[tuple[int, dict[str, Any] | str]]
) -> None:
    """Papers from (line, record or error) pairs: one bad record never stops the rest. Records of
    a whole-file JSON document have no line (0): their errors name the record's position."""
    index = 0
    for lineno, row in rows:
        try:
            if isinstance(row, str):
                raise ValueError(row)
            report.papers.append(paper_from_record(formats.to_record(row), f"{label}#{index}"))
        except ValueError as exc:
            where = "" if lineno else f"record {index + 1}: "
            report.errors.append(ReadError(str(path), lineno or None, where + str(exc)))
        index += 1
    if index == 0:
        raise ValueError("empty file")


def read_jsonl(path: Path, label: str, report: ReadReport) -> None:
    _records(path, label, report, json_objects(path))


def read_json(path: Path, label: str, report: ReadReport) -> None:
    """A whole-file JSON document: a list of records, or an OpenReview response `{"notes": [...]}`.
    A file of one object per line is read as JSONL whatever its extension."""
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several objects: JSON Lines
            return read_jsonl(path, label, report)
        raise ValueError(f"malformed JSON at line {exc.lineno} ({exc.msg})") from None
    rows = formats.openreview_notes(data) or (data if isinstance(data, list) else [data])
    _records(
        path, label, report, ((0, r if isinstance(r, dict) else "item is not a JSON object") for r in rows)
    )


def read_bibtex(path: Path, label: str, report: ReadReport) -> None:
    _records(path, label, report, formats.bibtex_records(_read_text(path)))


def read_csv(path: Path, label: str, report: ReadReport) -> None:
    reader = csv.DictReader(io.StringIO(_read_text(path), newline=""))
    columns = {c.strip().lower() for c in reader.fieldnames or []}
    if not columns & set(_FIELD_ALIASES["abstract"]):
        raise ValueError(f"no 'abstract' column (columns: {', '.join(sorted(columns)) or 'none'})")
    for index, row in enumerate(reader):
        lineno = reader.line_num
        try:
            clean = {(k or "").strip().lower(): v for k, v in row.items() if k is not None}
            report.papers.append(paper_from_record(clean, f"{label}#{index}"))
        except ValueError as exc:
            report.errors.append(ReadError(str(path), lineno, str(exc)))


_READERS = {".txt": read_plain, ".md": read_plain, ".jsonl": read_jsonl, ".json": read_json,
            ".bib": read_bibtex, ".csv": read_csv}  # fmt: skip


def _open(path: Path):
    """The file's bytes, decompressed when it is gzipped JSON Lines."""
    return gzip.open(path, "rb") if path.name.lower().endswith(GZIP) else path.open("rb")


def _suffix(path: Path) -> str:
    return ".jsonl" if path.name.lower().endswith(GZIP) else path.suffix.lower()


def _reader(path: Path):
    """The reader for a file's content: an exported `.txt` or `.json` that holds BibTeX, or a
    `.jsonl` that holds one JSON document, is read for what it is."""
    suffix = _suffix(path)
    if suffix in (".csv", ".md"):
        return _READERS[suffix]
    if path.name.lower().endswith(GZIP):
        return _READERS[".jsonl"]
    with path.open("rb") as fh:
        head = _decode(fh.read(65536)).lstrip()
    if head.startswith("["):
        return _READERS[".json"]
    if head.startswith("{"):
        try:  # JSON Lines: the first line is a whole object
            json.loads(head.split("\n", 1)[0])
            return _READERS[".jsonl"]
        except json.JSONDecodeError:
            pass
        try:  # one JSON document over several lines
            json.loads(_read_text(path))
            return _READERS[".json"]
        except (json.JSONDecodeError, ValueError):
            pass  # neither: the extension's reader reports what is wrong, line by line
    if formats.looks_like_bibtex(head):
        return _READERS[".bib"]
    return _READERS[suffix]


def _walk(root: Path, report: ReadReport) -> Iterator[tuple[Path, str]]:
    """Files under `root` in a stable order, with labels relative to it; symlink loops and
    unreadable folders become errors instead of hangs or crashes."""
    if root.is_file():
        yield root, root.name
        return
    seen: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=None):
        st = os.stat(dirpath)
        if (st.st_dev, st.st_ino) in seen:
            report.errors.append(ReadError(dirpath, None, "symlink loop, skipped"))
            dirnames[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            yield path, path.relative_to(root).as_posix()


def read_paths(paths: list[Path]) -> ReadReport:
    """Read every supported file under `paths`; one bad file or line never stops the rest."""
    report = ReadReport()
    for root in paths:
        if not root.exists():
            report.errors.append(ReadError(str(root), None, "no such file or directory"))
            continue
        sidecars: dict[Path, list[dict[str, Any]]] = {}
        folders: list[tuple[int, int, Path]] = []  # papers[start:end] came from this folder
        for path, label in _walk(root, report):
            suffix = _suffix(path)
            if suffix not in SUPPORTED:
                continue
            if path.name == SIDECAR_NAME and root.is_dir():
                sidecars[path.parent] = _load_sidecar(path, report)
                continue
            start = len(report.papers)
            try:
                _reader(path)(path, label, report)
                report.files_read.append(label)
            except (OSError, ValueError) as exc:
                del report.papers[start:]
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                report.errors.append(ReadError(str(path), None, str(reason)))
            folders.append((start, len(report.papers), path.parent))
        for start, end, folder in folders:
            for paper in report.papers[start:end]:
                if folder in sidecars:
                    apply_sidecar(paper, sidecars[folder])
    return report


def _load_sidecar(path: Path, report: ReadReport) -> list[dict[str, Any]]:
    rows = []
    try:
        for lineno, row in json_objects(path):
            if isinstance(row, str):
                report.errors.append(ReadError(str(path), lineno, f"sidecar row skipped: {row}"))
            else:
                rows.append(row)
    except (OSError, ValueError) as exc:
        report.errors.append(ReadError(str(path), None, f"sidecar unreadable: {exc}"))
    return rows


def apply_sidecar(paper: Paper, rows: list[dict[str, Any]]) -> None:
    """Fill a bare paper's missing fields from the sidecar row that matches it: by `file#index`
    occurrence first, else by equal normalized abstract text."""
    key = normalize_text(paper.abstract)
    match = next((r for r in rows if set(paper.sources) & set(r.get("occurrences") or [])), None)
    if match is None:
        match = next((r for r in rows if r.get("abstract") and normalize_text(r["abstract"]) == key), None)
    if match is None:
        return
    meta = paper_from_record({**match, "abstract": paper.abstract}, paper.sources[0])
    if paper.id.startswith("h-") and _pick(match, "id"):
        paper.id = meta.id
    paper.title = paper.title or meta.title
    paper.url = paper.url or meta.url
    paper.authors = paper.authors or meta.authors
    paper.year = paper.year or meta.year
    paper.venue = paper.venue or meta.venue
    paper.status = paper.status or meta.status
    for k, v in meta.extra.items():
        paper.extra.setdefault(k, v)
