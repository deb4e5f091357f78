"""The real chat server on loopback: 8 simultaneous sessions, queueing, isolation of histories,
password protection and file-system access through the HTTP API."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.integration.conftest import free_port

pytestmark = pytest.mark.slow

# Eight sessions, each about its own paper; the follow-up must stay on that paper.
SESSIONS = [
    ("What is Time-MoE?", "Time-MoE"),
    ("What is BirdSet?", "BirdSet"),
    ("What is TEAL activation sparsity?", "Training-Free Activation Sparsity"),
    ("What is STBLLM?", "STBLLM"),
    ("What is LoLCATs?", "LoLCATs"),
    ("What is MOFFlow?", "MOFFlow"),
    ("What is Montessori-Instruct?", "Montessori-Instruct"),
    ("What is the DELTA 3D tracking method?", "DELTA"),
]
FOLLOW_UP = "Which datasets did they use?"


def _launch(settings):
    from ui.app import main

    demo = main(settings, block=False)
    return demo, f"http://127.0.0.1:{settings.ui_port}/"


@pytest.fixture(scope="module")
def server(seed_settings):
    # SmolLM2 keeps eight queued answers within a couple of minutes; the path is the real one.
    settings = seed_settings.model_copy(
        update={"ui_port": free_port(), "llm_backend": "llamacpp", "model": "smollm2"}
    )
    demo, url = _launch(settings)
    yield url
    threading.Thread(target=demo.close, daemon=True).start()


def _text(result) -> str:
    """The assistant messages a /chat call returned, as one string."""
    messages = (
        result[0] if isinstance(result, tuple | list) and result and isinstance(result[0], list) else result
    )
    if isinstance(messages, dict):
        messages = [messages]
    return "\n".join(
        str(m.get("content", "")) + str(m.get("metadata", "")) for m in messages if isinstance(m, dict)
    )


def _session(url: str, question: str, expected: str) -> dict:
    from gradio_client import Client

    client = Client(url, verbose=False)
    ranks: list[int] = []
    job = client.submit(question, 3, "auto", 0.0, api_name="/chat")
    while not job.done():
        status = job.status()
        if status.rank is not None:
            ranks.append(status.rank)
        time.sleep(0.2)
    first = _text(job.result())
    # Same client = same session: its history (gr.State) must hold its own paper only.
    history = [{"role": "user", "content": question}, {"role": "assistant", "content": first}]
    follow = _text(client.predict(FOLLOW_UP, 3, "auto", 0.0, api_name="/chat"))
    return {"question": question, "expected": expected, "first": first, "follow": follow,
            "max_rank": max(ranks, default=0), "history": history}  # fmt: skip


def test_eight_simultaneous_sessions_get_their_own_cited_answers(server):
    # No time bound here: how long eight queued answers take is the CPU's business (bench/).
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda s: _session(server, *s), SESSIONS))
    for r in results:
        assert r["expected"].lower() in r["first"].lower(), (r["question"], r["first"][:500])
        assert "cw-source" in r["first"] or "Closest papers" in r["first"]
    # One local model serves one answer at a time: the others waited in the queue, and saw it.
    assert max(r["max_rank"] for r in results) >= 1
    # Follow-ups were rewritten with each session's own paper, never another session's.
    for r in results:
        others = [e for _, e in SESSIONS if e != r["expected"]]
        searched = (
            r["follow"].split("Searched for")[0] if "Searched for" in r["follow"] else r["follow"][:400]
        )
        assert r["expected"].lower() in r["follow"].lower(), (r["question"], r["follow"][:500])
        assert not any(f"about: {o}".lower() in searched.lower() for o in others)


def test_files_outside_the_app_are_not_served(server):
    for path in ("gradio_api/file=/etc/passwd", "file=/etc/passwd", "gradio_api/file=../../../../etc/passwd",
                 "gradio_api/file=" + str(__file__)):  # fmt: skip
        r = httpx.get(server + path, timeout=10)
        assert r.status_code in (403, 404), (path, r.status_code)
        assert "root:" not in r.text


def test_page_binds_to_loopback_and_password_protects_when_asked(seed_settings):
    from rag.settings import Settings

    assert Settings().ui_host == "127.0.0.1"
    settings = seed_settings.model_copy(
        update={
            "ui_port": free_port(),
            "ui_auth": "alice:s3cret",
            "llm_backend": "llamacpp",
            "model": "smollm2",
        }
    )
    demo, url = _launch(settings)
    try:
        r = httpx.post(
            url + "gradio_api/queue/join",
            json={"data": ["hi", 3, "auto", 0.0], "fn_index": 0, "session_hash": "x"},
            timeout=10,
        )
        assert r.status_code in (401, 403)
        login = httpx.post(url + "login", data={"username": "alice", "password": "wrong"}, timeout=10)
        assert login.status_code in (400, 401)
        ok = httpx.post(url + "login", data={"username": "alice", "password": "s3cret"}, timeout=10)
        assert ok.status_code == 200
    finally:
        threading.Thread(target=demo.close, daemon=True).start()
