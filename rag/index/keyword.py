"""The keyword side of search, in one SQLite file beside the vectors: BM25 over the stemmed text of
every chunk (an FTS5 table finds the candidates, BM25 ranks them) and an exact index of the names
each chunk contains. It holds no documents (Chroma does) and is kept in step with Chroma by
difference: chunks Chroma gained are added, chunks it lost are removed, so a re-ingest of 1 % costs
1 % and nothing of the index has to fit in memory."""

from __future__ import annotations

import json
import logging
import math
import shutil
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rag import filters as flt
from rag import text as tx
from rag.index.aliases import extract, singular

log = logging.getLogger(__name__)

FILE = "index.sqlite"
FORMAT = 3  # bumped when the tables or the terms change: an older file is rebuilt
K1, B = 1.5, 0.75  # BM25 as bm25s and Lucene weigh it
CANDIDATES = 200  # chunks ranked by BM25 per query
# Terms are taken rarest first until their documents add up to this: the candidates are the chunks
# with the query's rarest terms (a term in half the index is nearly a stop word and would cost a
# score for every chunk); every query term then counts in their BM25.
RARE_POSTINGS = 20_000
PAGE = 500

_FIELDS = flt.FIELD_KEYS
_TABLES = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs(rowid INTEGER PRIMARY KEY, cid TEXT UNIQUE NOT NULL, len INTEGER,
                                names TEXT, {", ".join(_FIELDS)});
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, tokenize='unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(fts, row);
CREATE TABLE IF NOT EXISTS names(name TEXT, row INTEGER, PRIMARY KEY(name, row)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS aliases(short TEXT, key TEXT, long TEXT, row INTEGER);
CREATE INDEX IF NOT EXISTS aliases_short ON aliases(short);
CREATE INDEX IF NOT EXISTS aliases_key ON aliases(key);
CREATE INDEX IF NOT EXISTS aliases_row ON aliases(row);
"""

Fetch = Callable[[list[str]], Iterable[tuple[str, str, dict[str, Any]]]]
Progress = Callable[[int, int], None]  # (chunks done, chunks to do)


def _filter_sql(filters: flt.Filters | None) -> tuple[str, list[str]]:
    clauses, args = [], []
    for key, values in sorted((filters or {}).items()):
        clauses.append(f" AND d.{flt.PREFIX}{key} IN ({','.join('?' * len(values))})")
        args += list(values)
    return "".join(clauses), args


class KeywordIndex:
    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        _drop_old_format(directory)
        self.path = directory / FILE
        self._lock = threading.RLock()
        # One connection shared under a lock: a query takes milliseconds, and several threads of
        # the chat page may search at once.
        self._con = sqlite3.connect(self.path, timeout=600, isolation_level=None, check_same_thread=False)
        self._con.execute("PRAGMA journal_mode=WAL")  # readers keep searching while a sync writes
        if self._meta("format") not in (None, str(FORMAT)):
            self._con.executescript("DROP TABLE IF EXISTS vocab; DROP TABLE IF EXISTS fts; "
                                    "DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS names; DROP TABLE IF EXISTS meta; "
                                    "DROP TABLE IF EXISTS aliases;")  # fmt: skip
        self._con.executescript(_TABLES)
        self._stats: tuple[str | None, int, float] = ("", 0, 0.0)

    def close(self) -> None:
        with self._lock:
            self._con.close()

    # ---- state ------------------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        try:
            row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:  # no tables yet
            return None
        return row[0] if row else None

    def stamp(self) -> str | None:
        """The Chroma state this index was last brought in step with."""
        with self._lock:
            return self._meta("stamp")

    def _load_stats(self) -> tuple[int, float]:
        stamp = self._meta("stamp")
        if self._stats[0] != stamp:
            n, avg = self._con.execute("SELECT count(*), coalesce(avg(len), 0) FROM docs").fetchone()
            self._stats = (stamp, n, float(avg))
        return self._stats[1], self._stats[2]

    @property
    def size(self) -> int:
        with self._lock:
            return self._load_stats()[0]

    def values(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """The stored values of each filter key, on the most papers first."""
        with self._lock:
            out = {}
            for key in keys:
                column = flt.PREFIX + key
                if column not in _FIELDS:
                    raise KeyError(key)
                rows = self._con.execute(
                    f"SELECT {column}, count(DISTINCT substr(cid, 1, instr(cid, '::'))) AS n FROM docs "
                    f"WHERE {column} != '' GROUP BY {column} ORDER BY n DESC, {column}"
                ).fetchall()
                out[key] = [v for v, _ in rows]
            return out

    # ---- keeping in step with Chroma ----------------------------------------------------
    def sync(
        self,
        stamp: str,
        ids: Callable[[], Iterable[str]],
        fetch: Fetch,
        *,
        reset: str = "",
        progress: Progress | None = None,
    ) -> None:
        """Bring the index to the chunks `ids()` lists (fetching only the ones it lacks) and record
        `stamp`. A different `reset` (the collection's schema: its filter fields may have changed in
        place) clears the index first. Safe against other processes: one syncs, the others wait and
        then find the stamp current. `progress(done, total)` follows the chunks added."""
        with self._lock:
            if self._meta("stamp") == stamp:
                return
            con = self._con
            con.execute("BEGIN IMMEDIATE")
            try:
                if self._meta("stamp") != stamp:
                    if self._meta("reset") != reset:
                        for table in ("docs", "fts", "names", "aliases"):  # (executescript would commit)
                            con.execute(f"DELETE FROM {table}")
                    added, removed = self._apply(ids, fetch, progress)
                    for key, value in (("stamp", stamp), ("reset", reset), ("format", str(FORMAT))):
                        con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
                    log.info("keyword index: %d chunks added, %d removed", added, removed)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def _apply(
        self, ids: Callable[[], Iterable[str]], fetch: Fetch, progress: Progress | None
    ) -> tuple[int, int]:
        con = self._con
        have = dict(con.execute("SELECT cid, rowid FROM docs"))
        wanted = set(ids())
        gone = [row for cid, row in have.items() if cid not in wanted]
        for row in gone:
            names = json.loads(con.execute("SELECT names FROM docs WHERE rowid = ?", (row,)).fetchone()[0])
            con.executemany("DELETE FROM names WHERE name = ? AND row = ?", [(n, row) for n in names])
            con.execute("DELETE FROM fts WHERE rowid = ?", (row,))
            con.execute("DELETE FROM aliases WHERE row = ?", (row,))
            con.execute("DELETE FROM docs WHERE rowid = ?", (row,))
        new = sorted(wanted.difference(have))
        for start in range(0, len(new), PAGE):
            for cid, doc, meta in fetch(new[start : start + PAGE]):
                self._add(cid, doc or "", meta)
            if progress:
                progress(min(start + PAGE, len(new)), len(new))
        return len(new), len(gone)

    def _add(self, cid: str, doc: str, meta: dict[str, Any]) -> None:
        terms = tx.keyword_terms(doc)
        names = sorted(tx.name_tokens(doc))
        row = self._con.execute(
            f"INSERT INTO docs(cid, len, names, {', '.join(_FIELDS)}) VALUES (?, ?, ?{', ?' * len(_FIELDS)})",
            (cid, len(terms), json.dumps(names), *(str(meta.get(f, "")) for f in _FIELDS)),
        ).lastrowid
        self._con.execute("INSERT INTO fts(rowid, body) VALUES (?, ?)", (row, " ".join(terms)))
        self._con.executemany("INSERT OR IGNORE INTO names VALUES (?, ?)", [(n, row) for n in names])
        self._con.executemany(
            "INSERT INTO aliases VALUES (?, ?, ?, ?)", [(a.short, a.key, a.long, row) for a in extract(doc)]
        )

    # ---- queries ----------------------------------------------------------------------
    def search(self, query: str, n: int, filters: flt.Filters | None = None) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) of the best `n` chunks within `filters`, best first."""
        terms = list(dict.fromkeys(tx.keyword_terms(query)))
        if not terms or n < 1:
            return []
        with self._lock:
            count, avg_len = self._load_stats()
            if not count:
                return []
            marks = ",".join("?" * len(terms))
            df = dict(self._con.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", terms))
            terms = sorted((t for t in terms if df.get(t)), key=lambda t: df[t])
            if not terms:
                return []
            rare, total = [], 0
            for term in terms:
                if rare and total + df[term] > RARE_POSTINGS:
                    break
                rare.append(term)
                total += df[term]
            rows = self._candidates(rare, filters)
            if filters and len(rows) < n and len(rare) < len(terms):
                rows = self._candidates(terms, filters)  # the filter left few chunks with the rare terms
        idf = {t: math.log(1 + (count - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
        scored = []
        for cid, length, body in rows:
            tf = Counter(body.split())
            norm = K1 * (1 - B + B * length / (avg_len or 1))
            score = sum(idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if tf[t])
            scored.append((cid, score))
        scored.sort(key=lambda x: -x[1])
        return [(cid, s) for cid, s in scored[:n] if s > 0]

    def _candidates(self, terms: list[str], filters: flt.Filters | None) -> list[tuple[str, int, str]]:
        where, args = _filter_sql(filters)
        match = " OR ".join(f'"{t}"' for t in terms)  # terms are [a-z0-9] stems: safe inside quotes
        return self._con.execute(
            "SELECT d.cid, d.len, f.body FROM fts f JOIN docs d ON d.rowid = f.rowid "
            f"WHERE fts MATCH ?{where} ORDER BY f.rank LIMIT ?",
            (match, *args, CANDIDATES),
        ).fetchall()

    def frequencies(self, terms: list[str]) -> dict[str, int]:
        """term -> how many chunks contain it (0 for a term no chunk has)."""
        if not terms:
            return {}
        marks = ",".join("?" * len(terms))
        with self._lock:
            df = dict(self._con.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", terms))
        return {t: int(df.get(t, 0)) for t in terms}

    def chunks_with_phrase(
        self, terms: list[str], limit: int, filters: flt.Filters | None = None
    ) -> list[str]:
        """Ids of up to `limit` chunks whose stemmed text holds `terms` in a row (stop words
        aside: "mixture of experts" is the phrase mixtur expert)."""
        if not terms:
            return []
        where, args = _filter_sql(filters)
        match = '"' + " ".join(terms) + '"'  # terms are [a-z0-9] stems: safe inside quotes
        with self._lock:
            rows = self._con.execute(
                f"SELECT d.cid FROM fts f JOIN docs d ON d.rowid = f.rowid WHERE fts MATCH ?{where} LIMIT ?",
                (match, *args, limit),
            )
            return [cid for (cid,) in rows]

    def name_chunks(self, forms: list[str], limit: int, filters: flt.Filters | None = None) -> list[str]:
        """Ids of up to `limit` chunks that contain one of `forms` (a name's ways of being written,
        `tx.name_forms`) as a token, exactly as written."""
        where, args = _filter_sql(filters)
        marks = ",".join("?" * len(forms))
        with self._lock:
            rows = self._con.execute(
                "SELECT d.cid FROM docs d WHERE d.rowid IN "
                f"(SELECT row FROM names WHERE name IN ({marks})){where} LIMIT ?",
                (*forms, *args, limit),
            )
            return [cid for (cid,) in rows]

    def long_forms(self, short: str) -> list[tuple[str, str, int]]:
        """The long forms the indexed papers define `short` as (its singular, "PINN" for "PINNs"):
        (the form most written, its key, how many papers define it so), most papers first."""
        return self._aliases("short = ?", singular(short), "key")

    def short_forms(self, key: str) -> list[tuple[str, str, int]]:
        """The acronyms the indexed papers define for the long form with stems `key`
        (`aliases.form_key`): (acronym, key, how many papers define it so), most papers first."""
        return self._aliases("key = ?", key, "short")

    def _aliases(self, where: str, value: str, group: str) -> list[tuple[str, str, int]]:
        if not value:
            return []
        sql = (
            "SELECT a.short, a.key, a.long, count(DISTINCT substr(d.cid, 1, instr(d.cid, '::'))) AS n "
            f"FROM aliases a JOIN docs d ON d.rowid = a.row WHERE a.{where} GROUP BY a.{group}, a.long"
        )
        with self._lock:
            rows = self._con.execute(sql, (value,)).fetchall()
        merged: dict[tuple[str, str], list] = {}  # per (acronym, key): the form most written
        for short, key, long, n in sorted(rows, key=lambda r: -r[3]):
            entry = merged.setdefault((short, key), [short if group == "short" else long, key, 0])
            entry[2] += n
        return sorted(((a, k, n) for a, k, n in merged.values()), key=lambda r: (-r[2], r[0]))

    def name_count(self, forms: list[str], limit: int) -> int:
        """How many chunks (counted up to `limit`) contain one of `forms` as a token."""
        marks = ",".join("?" * len(forms))
        with self._lock:
            sql = f"SELECT count(*) FROM (SELECT DISTINCT row FROM names WHERE name IN ({marks}) LIMIT ?)"
            return self._con.execute(sql, (*forms, limit)).fetchone()[0]


def collection_source(col: Any, page: int) -> tuple[Callable[[], list[str]], Fetch]:
    """What `sync` reads from a Chroma collection: every chunk id, and documents by id."""

    def ids() -> list[str]:
        out: list[str] = []
        while got := col.get(include=[], limit=page, offset=len(out))["ids"]:
            out += got
        return out

    def fetch(wanted: list[str]):
        got = col.get(ids=wanted, include=["metadatas", "documents"])
        return zip(got["ids"], got["documents"], got["metadatas"])

    return ids, fetch


def _drop_old_format(directory: Path) -> None:
    """Remove the files of the earlier in-memory BM25 index (a gigabyte at 100k papers)."""
    if (directory / "citewise_stamp.json").exists():
        for path in directory.iterdir():
            if not path.name.startswith(FILE):  # the file and its -wal/-shm stay
                shutil.rmtree(path) if path.is_dir() else path.unlink()
