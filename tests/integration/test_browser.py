"""The real chat page, the real index and the real embedded LLM, driven by headless Chromium."""

import shutil
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.integration.conftest import free_port
from ui.app import EXAMPLES

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def server(seed_settings):
    from ui.app import main

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `make browser` installs it (apt-get install chromium)")
    settings = seed_settings.model_copy(update={"ui_port": free_port(), "llm_backend": "llamacpp"})
    demo = main(settings, block=False)
    yield f"http://127.0.0.1:{settings.ui_port}/"
    threading.Thread(target=demo.close, daemon=True).start()


def _ask(page, text: str, answers_before: int) -> None:
    box = page.get_by_role("textbox").first
    box.fill(text)
    box.press("Enter")
    # The final answer carries either a sources block or the "closest papers" list.
    page.wait_for_function(
        "n => document.querySelectorAll('#cw-chat .cw-source').length > n"
        " || [...document.querySelectorAll('#cw-chat')].some(e => e.innerText.includes('Closest papers'))",
        arg=answers_before,
        timeout=240_000,
    )


def test_question_and_followup_in_a_real_browser(server, request, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 1200})
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-status", timeout=60_000)
        assert "papers" in page.locator("#cw-status").inner_text()
        # Example questions sit in the empty chat as buttons, not in a table of settings values.
        page.locator("#cw-chat").get_by_text(EXAMPLES[0]).first.wait_for(state="visible", timeout=30_000)
        assert page.locator("table:visible", has_text=EXAMPLES[0]).count() == 0

        _ask(page, "How many time points are in the Time-300B dataset used to pre-train Time-MoE?", 0)
        chat = page.locator("#cw-chat")
        cite = chat.locator("a.cw-cite").first
        assert cite.is_visible()
        target = cite.get_attribute("href")
        assert target.startswith("#cw-") and chat.locator(target).count() == 1
        assert "Time-MoE" in chat.locator(target).inner_text()
        assert "300" in chat.inner_text()
        # The README's picture is rewritten only when asked (`make screenshot`): tests leave the tree clean.
        shot = (
            ROOT / "docs" / "screenshot.png"
            if request.config.getoption("--screenshot")
            else tmp_path / "s.png"
        )
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000

        n_sources = chat.locator(".cw-source").count()
        _ask(page, "How many parameters does it scale to?", n_sources)
        text = chat.inner_text()
        assert "Time-MoE" in text.split("How many parameters does it scale to?")[-1]
        assert "2.4" in text.split("How many parameters does it scale to?")[-1]
        browser.close()
