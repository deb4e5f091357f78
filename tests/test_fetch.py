"""`citewise fetch` against a local server that speaks the services' documented formats (OpenReview
API v2 groups and paged notes; the arXiv API's Atom feed), never the network: every page read, a
429 with Retry-After, a 5xx and a page cut short retried, a fetch killed midway resumed without a
record lost or doubled, a bad venue id and no network each one clear line, and the file ingests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from typer.testing import CliRunner

from rag.fetch import arxiv, openreview
from rag.fetch.http import FetchError, Polite
from rag.fetch.output import Output

VENUE = "Test.cc/2025/Conference"
STATUS = [
    "ICLR 2025 Oral",
    "ICLR 2025 Poster",
    "Submitted to ICLR 2025",
    "ICLR 2025 Conference Withdrawn Submission",
]
NOTES = [
    {"id": f"n{i:03d}", "forum": f"n{i:03d}", "cdate": 1727000000000,
     "content": {"title": {"value": f"Paper {i} on topic {i % 3}"},
                 "abstract": {"value": f"We study problem {i}. Our method {i} improves accuracy by {i} points."},
                 "authors": {"value": [f"Author {i}", "Ada Lovelace"]}, "venue": {"value": STATUS[i % 4]},
                 "primary_area": {"value": "optimization"}, "keywords": {"value": ["k"]}}}
    for i in range(25)
]  # fmt: skip
PAGE_CAP = 10  # the server gives at most this many notes a page, whatever the limit asked


class Server:
    """A local OpenReview + arXiv API; `faults` maps a request number (1-based, over /notes and
    /api/query requests) to "429", "500", "cut" or "hold" (answer only once `release` is set)."""

    def __init__(self, faults: dict[int, str] | None = None):
        self.faults = dict(faults or {})
        self.requests: list[str] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/groups":
                    known = q.get("id") == VENUE
                    group = {"id": VENUE, "content": {"submission_name": {"value": "Submission"}}}
                    return self._send(200, json.dumps({"groups": [group] if known else []}))
                server.requests.append(self.path)
                fault = server.faults.pop(len(server.requests), None)
                if fault == "429":
                    return self._send(429, "slow down", {"Retry-After": "0"})
                if fault == "500":
                    return self._send(500, "oops")
                if fault == "hold":
                    server.release.wait(30)
                body = self._notes(q) if url.path == "/notes" else self._feed(q)
                self._send(200, body[: len(body) // 2] if fault == "cut" else body)

            def _notes(self, q):
                offset, limit = int(q.get("offset", 0)), min(int(q.get("limit", 1000)), PAGE_CAP)
                return json.dumps({"notes": NOTES[offset : offset + limit], "count": len(NOTES)})

            def _feed(self, q):
                start, size = int(q["start"]), int(q["max_results"])
                entries = "".join(
                    f"<entry><id>http://arxiv.org/abs/2501.{i:05d}v2</id><title>Title {i}</title>"
                    f"<summary>Abstract {i} about diffusion.\n Second line.</summary><published>2025-01-0{1 + i % 9}T00:00:00Z</published>"
                    f"<author><name>Alan Turing</name></author><category term='cs.LG'/></entry>"
                    for i in range(start, min(start + size, 7))
                )
                return (
                    '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" '
                    'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
                    f"<opensearch:totalResults>7</opensearch:totalResults>{entries}</feed>"
                )

            def _send(self, code, body, headers=None):
                data = body.encode()
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.httpd.shutdown()


@pytest.fixture
def server():
    servers = []

    def make(faults=None):
        servers.append(Server(faults))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def _polite(url: str) -> Polite:
    return Polite(url, interval=0, backoff=0.01, sleep=lambda s: None)


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_every_page_is_read_and_faults_are_retried(server, tmp_path):
    s = server({1: "429", 2: "500", 3: "cut"})
    out = tmp_path / "venue.jsonl"
    n = openreview.fetch(VENUE, Output(out, {"openreview": VENUE}), _polite(s.url))
    assert n == 25 and _ids(out) == [f"n{i:03d}" for i in range(25)]
    assert len(s.requests) == 3 + 3  # three faults asked again, then three pages of ten
    assert Output(out, {"openreview": VENUE}).complete  # a second run has nothing to do


def test_a_bad_venue_id_and_no_network_are_one_clear_line(server, tmp_path):
    s = server()
    with pytest.raises(FetchError, match="no venue 'ICLR.cc/2099/Nope'"):
        openreview.fetch("ICLR.cc/2099/Nope", Output(tmp_path / "a.jsonl", {"o": 1}), _polite(s.url))
    with pytest.raises(FetchError, match="cannot reach 127.0.0.1.*are you online"):
        openreview.fetch(VENUE, Output(tmp_path / "b.jsonl", {"o": 2}), _polite("http://127.0.0.1:9"))


def test_the_cli_says_one_line_and_no_stack_trace(server, tmp_path, monkeypatch):
    from rag.cli import app

    monkeypatch.setattr("rag.fetch.http.time.sleep", lambda s: None)
    s = server()
    result = CliRunner().invoke(
        app, ["fetch", "openreview", "Nope/2025", "--out", str(tmp_path / "x.jsonl"), "--api", s.url]
    )
    assert (
        result.exit_code != 0 and "no venue 'Nope/2025'" in result.output and "Traceback" not in result.output
    )
    offline = [
        "fetch",
        "openreview",
        VENUE,
        "--out",
        str(tmp_path / "y.jsonl"),
        "--api",
        "http://127.0.0.1:9",
    ]
    result = CliRunner().invoke(app, offline)
    assert result.exit_code != 0 and "are you online" in result.output and "Traceback" not in result.output


def test_a_file_another_fetch_or_a_person_wrote_is_not_overwritten(tmp_path):
    mine = tmp_path / "notes.jsonl"
    mine.write_text('{"id": "x"}\n')
    with pytest.raises(FetchError, match="no fetch wrote it"):
        Output(mine, {"openreview": VENUE})


def test_a_fetch_killed_midway_resumes_without_loss_or_duplicates(server, tmp_path):
    s = server({3: "hold"})  # the third page waits: the fetch is killed while it waits
    out = tmp_path / "venue.jsonl"
    cmd = [sys.executable, "-m", "rag.cli", "fetch", "openreview", VENUE, "--out", str(out), "--api", s.url]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    state = out.with_name(out.name + ".fetch.json")
    for _ in range(600):  # until two pages are on disk (no time is asserted: a slow machine waits longer)
        if state.exists() and json.loads(state.read_text())["next"] == 20:
            break
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    with open(out, "a") as f:
        f.write('{"id": "n02')  # a line cut short by the kill
    s.release.set()
    second = subprocess.run(cmd, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert _ids(out) == [f"n{i:03d}" for i in range(25)]
    assert "offset=20" in s.requests[-1] and not any("offset=0" in r for r in s.requests[3:])


def test_the_fetched_file_ingests_with_decisions_and_areas(server, tmp_path, store, embedder):
    from rag.index.ingest import ingest

    s = server()
    out = tmp_path / "venue.jsonl"
    openreview.fetch(VENUE, Output(out, {"openreview": VENUE}), _polite(s.url))
    ingest([out], store, embedder, chunk_tokens=60)
    papers = store.papers(["n000", "n002", "n003"])
    assert papers["n000"].status == "oral" and papers["n002"].status == "submitted"
    assert papers["n003"].status == "withdrawn" and papers["n000"].extra.get("primary_area") == "optimization"


def test_an_arxiv_query_is_read_page_by_page_within_dates_and_ingests(
    server, tmp_path, store, embedder, monkeypatch
):
    from rag.index.ingest import ingest

    monkeypatch.setattr(arxiv, "PAGE", 3)
    s = server({2: "cut"})
    out = tmp_path / "arxiv.jsonl"
    from datetime import date

    n = arxiv.fetch("cs.LG", Output(out, {"arxiv": "cs.LG"}), _polite(s.url), since=date(2025, 1, 1))
    assert n == 7 and _ids(out) == [f"arXiv:2501.{i:05d}" for i in range(7)]
    assert "cat%3Acs.LG" in s.requests[0] and "submittedDate" in s.requests[0]
    ingest([out], store, embedder, chunk_tokens=60)
    paper = store.papers(["arXiv:2501.00004"])["arXiv:2501.00004"]
    assert paper.title == "Title 4" and paper.year == 2025


def test_search_queries_are_built_from_a_category_words_or_a_search():
    assert arxiv.search_query("cs.LG") == "cat:cs.LG"
    assert arxiv.search_query("graph transformers") == "all:graph transformers"
    assert arxiv.search_query("ti:diffusion AND cat:cs.CV") == "ti:diffusion AND cat:cs.CV"
    from datetime import date

    ranged = arxiv.search_query("cs.CL", date(2025, 1, 1), date(2025, 1, 31))
    assert ranged == "(cat:cs.CL) AND submittedDate:[202501010000 TO 202501312359]"
