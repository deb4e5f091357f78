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
        timeout=900_000,
    )


# Records when the progress line, the evidence preview, the survey list and the first draft token
# first appear in the chat.
WATCH = """() => {
  window.cwSeen = {};
  const chat = document.querySelector('#cw-chat');
  new MutationObserver(() => {
    const now = performance.now();
    if (!window.cwSeen.progress && chat.querySelector('.cw-progress')) window.cwSeen.progress = now;
    if (!window.cwSeen.preview && chat.querySelector('.cw-preview')) window.cwSeen.preview = now;
    if (!window.cwSeen.list && chat.querySelector('.cw-list')) window.cwSeen.list = now;
    if (!window.cwSeen.draft && chat.innerText.includes('Draft — being checked')) window.cwSeen.draft = now;
  }).observe(chat, {subtree: true, childList: true, characterData: true});
}"""


QUESTION = "How many time points are in the Time-300B dataset used to pre-train Time-MoE?"
IDLE = (
    "() => !['being written', 'being checked'].some(t =>"
    " document.querySelector('#cw-chat').innerText.includes(t))"
)


def _readme_picture(page, request, tmp_path, question: str) -> None:
    """The README's picture: the question at the top, its checked answer with [n] markers, then the
    sources with the supporting sentence marked, the model done. Rewritten only when asked (`make
    screenshot`): tests leave the tree clean."""
    page.wait_for_function(IDLE, timeout=900_000)
    chat = page.locator("#cw-chat")
    assert chat.locator("a.cw-cite").count() >= 1 and chat.locator(".cw-source mark").count() >= 1
    chat.get_by_text(question).last.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.mouse.move(0, 0)
    shot = (
        ROOT / "docs" / "screenshot.png" if request.config.getoption("--screenshot") else tmp_path / "a.png"
    )
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


def test_question_and_followup_in_a_real_browser(server, request, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1100, "height": 1200}, accept_downloads=True)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.rstrip("/"))
        page = context.new_page()
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-status", timeout=180_000)
        assert "papers" in page.locator("#cw-status").inner_text()
        # Example questions sit in the empty chat as buttons, not in a table of settings values.
        page.locator("#cw-chat").get_by_text(EXAMPLES[0]).first.wait_for(state="visible", timeout=90_000)
        assert page.locator("table:visible", has_text=EXAMPLES[0]).count() == 0

        page.wait_for_selector("#cw-chat", state="attached", timeout=180_000)  # WATCH observes it
        page.evaluate(WATCH)
        _ask(page, QUESTION, 0)
        chat = page.locator("#cw-chat")
        seen = page.evaluate("window.cwSeen")
        # The progress line, then the evidence, are on screen before the model's first word.
        assert seen.get("preview") and seen.get("draft") and seen["preview"] < seen["draft"], seen
        assert seen.get("progress") and seen["progress"] <= seen["preview"], seen
        cite = chat.locator("a.cw-cite").first
        assert cite.is_visible()
        target = cite.get_attribute("href")
        assert target.startswith("#cw-") and chat.locator(target).count() == 1
        assert "Time-MoE" in chat.locator(target).inner_text()
        assert "300" in chat.inner_text()
        _readme_picture(page, request, tmp_path, QUESTION)
        _check_exports(page, tmp_path, must_cite="Time-MoE")

        n_sources = chat.locator(".cw-source").count()
        _ask(page, "How many parameters does it scale to?", n_sources)
        text = chat.inner_text()
        assert "Time-MoE" in text.split("How many parameters does it scale to?")[-1]
        assert "2.4" in text.split("How many parameters does it scale to?")[-1]

        # "similar papers" under a cited source asks for the papers like it, answered from the index;
        # clicked while the follow-up may still be being checked: the page holds it until then.
        chat.locator("span.cw-like button").first.click()
        page.wait_for_function(
            "() => document.querySelector('#cw-chat').innerText.includes('indexed papers nearest')",
            timeout=900_000,  # after the follow-up's checks, which on a slow CI host take minutes (as `_ask`)
        )
        assert "Papers like “" in chat.inner_text()
        browser.close()


ORALS = {
    "Knowledge Entropy Decay during Language Model Pretraining Hinders New Knowledge Acquisition",
    "Your Mixture-of-Experts LLM Is Secretly an Embedding Model for Free",
    "Data Selection via Optimal Control for Language Models",
    "SD-LoRA: Scalable Decoupled Low-Rank Adaptation for Class Incremental Learning",
}  # the seed papers whose status is "ICLR 2025 Oral" (seeds/papers.jsonl)


def _check_exports(page, tmp_path, must_cite: str) -> None:
    """The last answer's "Copy as Markdown" fills the clipboard with the answer and its numbered
    references; "Download BibTeX (cited papers)" saves a file that parses back."""
    import bibtexparser

    last = page.locator("#cw-chat .cw-export").last
    assert not last.locator("pre").first.is_visible()  # the text the buttons carry stays hidden
    last.get_by_role("button", name="Copy as Markdown").click()
    markdown = page.evaluate("navigator.clipboard.readText()")
    assert markdown.startswith("**Q:**") and "**References**" in markdown and must_cite in markdown
    with page.expect_download() as download:
        last.get_by_role("button", name="Download BibTeX (cited papers)").click()
    path = tmp_path / "refs.bib"
    download.value.save_as(path)
    library = bibtexparser.parse_string(path.read_text())
    assert library.entries and not library.failed_blocks
    assert any(must_cite in e["title"] for e in library.entries)


def test_a_filter_and_a_full_height_page(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-status", timeout=180_000)
        chat_box = page.locator("#cw-chat").bounding_box()
        assert chat_box["height"] >= 0.55 * 900, chat_box  # the conversation uses the window

        page.get_by_text("Settings and filters").click()
        field = page.locator("#cw-status-filter input")
        field.click()
        page.get_by_role("option", name="oral").click()
        page.keyboard.press("Escape")
        page.wait_for_function("document.querySelector('#cw-status').innerText.includes('status: oral')")
        page.get_by_text("Settings and filters").click()

        _ask(page, "Which papers study how pretraining data is selected or how knowledge is acquired?", 0)
        links = page.locator("#cw-chat a[target=_blank]")  # the sources' titles (one question asked)
        titles = [t.strip() for t in links.all_inner_texts() if t.strip()]
        assert titles and set(titles) <= ORALS, titles

        page.screenshot(path=str(tmp_path / "f.png"))
        assert (tmp_path / "f.png").stat().st_size > 10_000
        browser.close()


def test_a_survey_list_is_shown_before_the_model_writes(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-status", timeout=180_000)
        page.wait_for_selector("#cw-chat", state="attached", timeout=180_000)  # WATCH observes it
        page.evaluate(WATCH)
        box = page.get_by_role("textbox").first
        box.fill("Which papers study attention sinks?")
        box.press("Enter")
        page.wait_for_selector("#cw-chat .cw-list", timeout=180_000)
        # Order, not time: the list comes from the index, so it is on the page no later than the
        # first draft token (a slower CPU changes how long that takes, never the order; both may
        # land in one rendered frame on a busy machine).
        seen = page.evaluate("() => ({list: window.cwSeen.list, draft: window.cwSeen.draft})")
        assert seen["list"] and (seen["draft"] is None or seen["list"] <= seen["draft"]), seen
        rows = page.locator("#cw-chat .cw-list tr").count() - 1  # the header row
        assert rows >= 1 and "Attention Sink" in page.locator("#cw-chat .cw-list").inner_text()
        # Wait for the model, so the page is idle for whatever runs next.
        page.wait_for_function(IDLE, timeout=900_000)
        after = page.evaluate("window.cwSeen")
        assert after.get("draft") is None or after["list"] <= after["draft"], after
        browser.close()


# Each word of a list cell on one line: a word the browser broke ("spo / tlig / ht") has a box per line.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('#cw-chat .cw-list td, #cw-chat .cw-list th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/[^\\s\\-\\u2013\\/]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""
# Each source card: its number, title, marked sentence, and the answer's sentences that cite it.
CARDS = """() => {
  const chat = document.querySelector('#cw-chat');
  const bubbles = chat.querySelectorAll('.cw-source');
  const last = bubbles[bubbles.length - 1].parentElement;
  const text = last.innerText.split('Sources')[0];
  const sentences = text.split(/(?<=[.!?])\\s+/);
  return [...last.querySelectorAll('.cw-source')].map(card => {
    const n = card.querySelector('b').innerText.replace(/[\\[\\]]/g, '');
    return {n, title: card.querySelector('a')?.innerText || '', mark: card.querySelector('mark')?.innerText || '',
            citing: sentences.filter(s => s.includes('[' + n + ']'))};
  });
}"""


def _words(text: str) -> set[str]:
    import re

    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


def test_a_survey_list_reads_at_the_page_width_and_each_card_marks_what_the_answer_rests_on(server):
    from playwright.sync_api import sync_playwright

    question = "Which papers use mixture of experts, and what does each use it for?"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})  # the page's default width
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-chat", state="attached", timeout=180_000)
        _ask(page, question, page.locator("#cw-chat .cw-source").count())
        page.wait_for_function(IDLE, timeout=900_000)
        table = page.locator("#cw-chat .cw-list").last.inner_text()
        assert "Time-MoE" in table, table
        assert page.evaluate(BROKEN_WORDS) == []
        cards = page.evaluate(CARDS)
        assert cards, "no source card"
        for card in cards:
            # The marked sentence is what the answer's sentences citing this paper rest on: it shares
            # their words (titles aside), or it is the paper's sentence about the topic asked.
            said = set().union(*(_words(s) for s in card["citing"])) - _words(card["title"])
            topic = {"mixture", "experts", "expert"}
            assert _words(card["mark"]) & (said | topic), card
        browser.close()


def test_the_map_tab_works_with_the_network_blocked(server):
    """The Map tab loads with every request off this machine refused; it shows points and topic
    names, and hovering a point shows that paper's title."""
    from playwright.sync_api import sync_playwright

    refused: list[str] = []

    def local_only(route):
        url = route.request.url
        if url.startswith(server.rstrip("/")) or url.startswith(("data:", "blob:")):
            return route.continue_()
        refused.append(url)
        return route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-status", timeout=180_000)
        context.route("**/*", local_only)  # from here on, nothing but the local server answers
        page.get_by_role("tab", name="Map").click()
        page.wait_for_selector("#cw-map-frame", timeout=300_000)  # laid out on first opening
        frame = page.frame_locator("#cw-map-frame")
        frame.locator("#cw-map-legend .cw-map-topic").first.wait_for(timeout=120_000)
        inner = next(f for f in page.frames if "map.html" in f.url)
        state = inner.evaluate("() => ({shown: cwMap.shown, labels: cwMap.labels, n: cwMap.papers.length})")
        assert state["shown"] == state["n"] > 0 and state["labels"] >= 1, state
        boxes = inner.evaluate("() => cwMap.boxes.map(b => b.box)")
        assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]
                    if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]  # fmt: skip
        legend = frame.locator("#cw-map-legend").inner_text()
        topic_words = inner.evaluate("() => cwMap.topics[0].words")
        assert topic_words and topic_words[0] in legend
        # Hover the point drawn for paper 0: the tip names it.
        x, y = inner.evaluate("() => cwMap.screen(0)")
        canvas = frame.locator("#cw-map-canvas").bounding_box()
        page.mouse.move(canvas["x"] + x, canvas["y"] + y)
        title = inner.evaluate("() => cwMap.papers[0].title")
        tip = frame.locator("#cw-map-tip")
        tip.wait_for(state="visible", timeout=30_000)
        assert title[:40] in tip.inner_text().replace("\n", " ")
        # A status unticked hides its papers (the seeds have one status, so all of them).
        frame.locator("#cw-map-statuses input").first.uncheck()
        assert inner.evaluate("() => cwMap.shown") < state["n"]
        assert not refused, refused
        browser.close()


def _crowded_map():
    """400 papers in 20 topics of 3 themes each, with long names, all close together."""
    import numpy as np

    from rag.map.model import Cluster, ConferenceMap, MapPaper

    rng = np.random.default_rng(0)
    words = ["reinforcement learning", "policy optimization", "reward", "language models", "diffusion"]
    topics = [Cluster(t, [words[(t + i) % 5] for i in range(3)], 20, float(x), float(y))
              for t, (x, y) in enumerate(0.3 + 0.4 * rng.random((20, 2)))]  # fmt: skip
    themes = [Cluster(k, [words[(k + 2) % 5], f"theme {k}"], 7, float(x), float(y), k // 3)
              for k, (x, y) in enumerate(0.3 + 0.4 * rng.random((60, 2)))]  # fmt: skip
    papers = [MapPaper(f"p{i}", f"Paper {i}", "", "", "poster", float(x), float(y), i // 20, i // 20 * 3 + i % 3)
              for i, (x, y) in enumerate(rng.random((400, 2)))]  # fmt: skip
    return ConferenceMap("test", papers, topics, themes)


def test_map_names_never_overprint_at_any_zoom(tmp_path):
    """The page opened from a file: at the whole view and zoomed in, no two drawn names overlap,
    names crowded out at the whole view come back on zooming in, and themes are named zoomed in."""
    from playwright.sync_api import sync_playwright

    from rag.map.render import write_html

    page_file = write_html(_crowded_map(), tmp_path / "map.html", "Crowded")
    crossing = """() => { const b = cwMap.boxes.map(x => x.box); let n = 0;
      for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++)
        if (b[i][0] < b[j][2] && b[j][0] < b[i][2] && b[i][1] < b[j][3] && b[j][1] < b[i][3]) n++;
      return [n, cwMap.boxes.map(x => x.text)]; }"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1000, "height": 700})
        page.goto(page_file.as_uri(), wait_until="load")
        page.wait_for_function("() => window.cwMap && cwMap.labels > 0")
        seen = {}
        for scale, dx, dy in ((1, 0, 0), (3, 0, 0), (3, 400, 300), (8, -200, 100)):
            page.evaluate(f"() => cwMap.zoom({scale}, {dx}, {dy})")
            crossings, texts = page.evaluate(crossing)
            assert crossings == 0, (scale, texts)
            seen[(scale, dx, dy)] = texts
        browser.close()
    whole = seen[(1, 0, 0)]
    assert 0 < len(whole) < 20  # 20 long names do not all fit the whole view
    assert any("theme" in t for texts in list(seen.values())[1:] for t in texts)  # themes zoomed in


# A conversation as a person has it: a survey, a self-contained question whose "they" points
# inside itself, a true follow-up, and a switch to another paper (seed papers).
CONVERSATION = (
    ("Which papers use mixture of experts?", None),
    (
        "Which paper introduces knowledge entropy, and what do they find happens to it during pretraining?",
        "Knowledge Entropy Decay",
    ),
    ("What does its decline impair?", "Knowledge Entropy Decay"),
    ("How many embedding tasks is MoEE evaluated on?", "Mixture-of-Experts LLM Is Secretly"),
)
REWRITTEN = "Searched for (follow-up rewritten)"


def _turns(chat_text: str, questions) -> list[str]:
    """What the page shows after each question, up to the next one (each asked once, in order)."""
    starts, at = [], 0
    for q in questions:
        at = chat_text.index(q, at) + len(q)
        starts.append(at)
    ends = [chat_text.index(q, s) for q, s in zip(questions[1:], starts)] + [len(chat_text)]
    return [chat_text[s:e] for s, e in zip(starts, ends)]


def test_a_four_turn_conversation_is_read_right(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-chat", state="attached", timeout=180_000)
        page.evaluate(WATCH)
        chat = page.locator("#cw-chat")
        cited: list[list[str]] = []
        for question, _ in CONVERSATION:
            page.evaluate("window.cwSeen = {}")
            before = chat.locator(".cw-source").count()
            if question.startswith("Which papers"):  # a survey: its list, then the model's synthesis
                page.get_by_role("textbox").first.fill(question)
                page.get_by_role("textbox").first.press("Enter")
                page.wait_for_selector("#cw-chat .cw-list", timeout=180_000)
            else:
                _ask(page, question, before)
            page.wait_for_function(IDLE, timeout=900_000)
            seen = page.evaluate("window.cwSeen")
            # The page says what it is doing before the model's first word (order, not time).
            assert seen.get("progress"), (question, seen)
            assert seen.get("draft") is None or seen["progress"] <= seen["draft"], (question, seen)
            cited.append([t.split("\n")[0] for t in chat.locator(".cw-source").all_inner_texts()[before:]])
        text = chat.inner_text()
        questions = [q for q, _ in CONVERSATION]
        turns = _turns(text, questions)
        assert "Time-MoE" in page.locator("#cw-chat .cw-list").first.inner_text()
        # The self-contained question is asked as typed, and answered from its own paper.
        assert REWRITTEN not in turns[1], turns[1]
        assert any(CONVERSATION[1][1] in t for t in cited[1]), cited[1]
        # The follow-up is read as one, and answered from the paper just discussed.
        assert REWRITTEN in turns[2] and CONVERSATION[2][1] in turns[2], turns[2]
        assert any(CONVERSATION[2][1] in t for t in cited[2]), cited[2]
        # The switch to another paper is a new question again.
        assert REWRITTEN not in turns[3], turns[3]
        assert any(CONVERSATION[3][1] in t for t in cited[3]), cited[3]
        assert "New question:" not in text  # the undo button's question stays hidden
        # The follow-up's reading can be undone: asked again as a new question, read alone.
        before = chat.locator(".cw-source").count()
        chat.get_by_role("button", name="ask as a new question").first.click()
        page.wait_for_function(
            "n => document.querySelectorAll('#cw-chat .cw-source').length > n"
            " || document.querySelector('#cw-chat').innerText.includes('Closest papers')",
            arg=before,
            timeout=900_000,
        )
        page.wait_for_function(IDLE, timeout=900_000)
        again = chat.inner_text().split(CONVERSATION[2][0])[-1]
        assert REWRITTEN not in again, again
        browser.close()


def test_the_stop_button_ends_an_answer_being_written(server):
    """Stopped while the draft streams: no checked answer comes, and the page takes the next
    question (that the model is asked for no more tokens: tests/test_ui.py)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server, wait_until="load")
        page.wait_for_selector("#cw-chat", state="attached", timeout=180_000)
        chat = page.locator("#cw-chat")
        box = page.get_by_role("textbox").first
        box.fill("What does PAD personalize, and how does it align LLMs at decoding time?")
        box.press("Enter")
        page.wait_for_function(
            "() => document.querySelector('#cw-chat').innerText.includes('being written')"
            " || document.querySelector('#cw-chat').innerText.includes('Draft — being checked')",
            timeout=900_000,
        )
        page.locator("#cw-tab-chat button.stop-button").first.click()
        page.wait_for_selector("#cw-tab-chat button.submit-button", timeout=120_000)
        assert chat.locator(".cw-source").count() == 0  # no checked answer for the stopped question
        _ask(page, "How many time points are in the Time-300B dataset?", 0)
        assert "Time-MoE" in chat.locator(".cw-source").last.inner_text()
        browser.close()
