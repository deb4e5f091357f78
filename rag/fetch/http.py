"""A small polite HTTP layer: one request at a time, at least `interval` seconds apart, retried
with backoff on a connection error, a 429 (waiting what Retry-After says), a 5xx or a body that is
cut short; any other 4xx is the caller's to explain. httpx does the HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx


class FetchError(RuntimeError):
    """A fetch that cannot go on, with one line saying why."""


class Polite:
    def __init__(self, base: str, *, interval: float = 0.0, retries: int = 5, backoff: float = 1.0,
                 timeout: float = 60.0, sleep: Callable[[float], None] = time.sleep):  # fmt: skip
        self.base = base.rstrip("/")
        self.interval, self.retries, self.backoff, self.sleep = interval, retries, backoff, sleep
        self.client = httpx.Client(timeout=timeout, headers={"User-Agent": "citewise (https://github.com/)"})
        self._last = 0.0

    def _wait_turn(self) -> None:
        gap = self.interval - (time.monotonic() - self._last)
        if gap > 0:
            self.sleep(gap)
        self._last = time.monotonic()

    def get(self, path: str, params: dict[str, Any], parse: Callable[[str], Any]) -> tuple[int, Any]:
        """(status, parsed body) of GET base+path; `parse` raising ValueError means the body was cut
        short or garbled, and the request is made again. A 4xx other than 429 is returned as is."""
        url = f"{self.base}{path}"
        host = httpx.URL(url).host
        for attempt in range(self.retries + 1):
            self._wait_turn()
            wait = self.backoff * 2**attempt
            try:
                response = self.client.get(url, params=params)
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise FetchError(f"cannot reach {host} ({type(exc).__name__}): are you online?") from exc
                self.sleep(wait)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                if attempt == self.retries:
                    raise FetchError(f"{host} kept answering {response.status_code}; try again later")
                self.sleep(_retry_after(response) if response.status_code == 429 else wait)
                continue
            if response.status_code >= 400:
                return response.status_code, response.text
            try:
                return response.status_code, parse(response.text)
            except ValueError as exc:
                if attempt == self.retries:
                    raise FetchError(f"{host} sent a page that could not be read ({exc})") from exc
                self.sleep(wait)
        raise FetchError(f"{host}: no answer")  # not reached


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "5")))
    except ValueError:
        return 5.0
