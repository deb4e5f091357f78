"""Cold start: each measurement is a new process, as a user meets it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What dataset was Time-MoE pre-trained on?"


def _env(data: Path, model: str) -> dict[str, str]:
    return {**os.environ, "RAG_DATA_DIR": str(data), "RAG_MODELS_PATH": str(ROOT / "data" / "models"),
            "RAG_LLM_BACKEND": "llamacpp", "RAG_MODEL": model}  # fmt: skip


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "rag.cli", *args]


def timed_run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def ask_first_token(env: dict[str, str]) -> tuple[float, float]:
    """Seconds until a new `citewise ask` process prints the first token of the draft, and until it
    exits."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(_cli("ask", QUESTION), env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, bufsize=1)  # fmt: skip
    first = float("nan")
    assert proc.stdout is not None
    for line in proc.stdout:
        if first != first and line.startswith("Draft (being checked"):
            first = time.perf_counter() - t0
    proc.wait(timeout=300)
    return first, time.perf_counter() - t0


def chat_until_answer(env: dict[str, str], timeout: float = 300) -> tuple[float, float]:
    """Seconds until `citewise chat` serves its page, and until it has answered a question."""
    from gradio_client import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen(_cli("chat", "--port", str(port)), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        while time.perf_counter() - t0 < timeout:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        page = time.perf_counter() - t0
        client = Client(url, verbose=False)
        client.predict(QUESTION, 3, "auto", 0.0, [], api_name="/chat")
        return page, time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def bench_cold_start(data: Path, model: str) -> list[str]:
    env = _env(data, model)
    search = timed_run(_cli("search", QUESTION), env)
    ask_first, ask = ask_first_token(env)
    page, answered = chat_until_answer(env)
    return [
        f"## Cold start (new process, seeds index, {model})",
        "",
        "| what | seconds |",
        "|---|---|",
        f"| `citewise search` (imports, embedder load, Chroma open, BM25 load, search) | {search:.1f} |",
        f"| `citewise ask` until the first token of the draft is printed | {ask_first:.1f} |",
        f"| `citewise ask` until it exits (the above + the whole answer, checked) | {ask:.1f} |",
        f"| `citewise chat` until the page is served | {page:.1f} |",
        f"| `citewise chat` until the first question is answered (via `/chat`) | {answered:.1f} |",
        "",
    ]
