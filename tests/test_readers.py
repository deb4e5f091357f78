import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from rag.index.readers import clean_text, normalize_text, read_paths, text_id
from tests.conftest import SEEDS, write_jsonl


def test_seed_files_with_sidecar_get_titles_and_openreview_ids():
    report = read_paths([SEEDS])
    assert report.errors == []
    assert len(report.files_read) == 3
    assert len(report.papers) == 57  # 53 unique + 4 repeated across files
    first = report.papers[0]
    assert first.id == "eHehzSDUFp"
    assert first.title.startswith("Knowledge Entropy Decay")
    assert first.url == "https://openreview.net/forum?id=eHehzSDUFp"
    assert first.sources == ["000_021c39f98b6b3b62.txt#0"]
    assert all(not p.id.startswith("h-") for p in report.papers)


def test_jsonl_malformed_line_is_reported_and_rest_read(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(
        '{"abstract": "One good abstract here."}\n{not json\n{"title": "no abstract"}\n'
        '{"abstract": "Another good one.", "authors": "A. B; C. D", "year": "2025", "foo": 1}\n'
    )
    report = read_paths([path])
    assert [p.abstract for p in report.papers] == ["One good abstract here.", "Another good one."]
    assert [e.line for e in report.errors] == [2, 3]
    assert "malformed JSON" in str(report.errors[0]) and "x.jsonl:2" in str(report.errors[0])
    assert report.papers[1].authors == ["A. B", "C. D"]
    assert report.papers[1].year == 2025
    assert report.papers[1].extra == {"foo": 1}


def test_csv_fields_and_missing_column(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text('title,abstract,url,venue\nT1,"An abstract, with a comma.",http://u,ICLR\nT2,,x,y\n')
    bad = tmp_path / "bad.csv"
    bad.write_text("title,summaryx\nA,B\n")
    report = read_paths([good, bad])
    assert len(report.papers) == 1 and report.papers[0].title == "T1"
    assert report.papers[0].venue == "ICLR"
    msgs = [str(e) for e in report.errors]
    assert any("good.csv:3" in m and "no abstract" in m for m in msgs)
    assert any("bad.csv" in m and "no 'abstract' column" in m for m in msgs)


def test_plain_txt_and_md_are_one_paper_each(tmp_path):
    (tmp_path / "a.md").write_text("# My Title\n\nFirst paragraph of the abstract.\n\nSecond one.\n")
    (tmp_path / "b.txt").write_text("Just an abstract without title. It has two sentences.")
    report = read_paths([tmp_path])
    by_label = {p.sources[0]: p for p in report.papers}
    assert by_label["a.md#0"].title == "My Title"
    assert "Second one." in by_label["a.md#0"].abstract
    assert by_label["b.txt#0"].title == ""


def test_binary_empty_unreadable_and_non_utf8(tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "latin.txt").write_bytes("Caf\xe9 abstract about r\xe9sum\xe9s.".encode("latin-1"))
    (tmp_path / "ctrl.jsonl").write_text(json.dumps({"abstract": "bell\x07 and\x1b escape"}) + "\n")
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")
    os.chmod(locked, 0)
    report = read_paths([tmp_path])
    msgs = {os.path.basename(e.path): e.message for e in report.errors}
    assert "binary" in msgs["bin.txt"]
    assert msgs["empty.txt"] == "empty file"
    if os.geteuid() != 0:  # root reads anything
        assert "locked.txt" in msgs
    texts = {p.sources[0]: p.abstract for p in report.papers}
    assert texts["latin.txt#0"] == "Café abstract about résumés."
    assert texts["ctrl.jsonl#0"] == "bell and escape"


def test_symlink_loop_and_missing_path(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "p.txt").write_text("An abstract in a folder.")
    os.symlink(tmp_path / "d", tmp_path / "d" / "loop")
    report = read_paths([tmp_path / "d", tmp_path / "nope"])
    assert len(report.papers) == 1
    assert any("symlink loop" in str(e) for e in report.errors)
    assert any("no such file" in str(e) for e in report.errors)


def test_sidecar_matches_by_normalized_text(tmp_path):
    (tmp_path / "a.txt").write_text("Header\n\nFirst abstract, about cats.\n\nSecond abstract about dogs.\n")
    write_jsonl(
        tmp_path / "papers.jsonl",
        [{"id": "OR123", "title": "Dogs", "url": "https://o/r", "abstract": "second ABSTRACT about   dogs"}],
    )
    report = read_paths([tmp_path])
    dogs = [p for p in report.papers if "dogs" in p.abstract][0]
    cats = [p for p in report.papers if "cats" in p.abstract][0]
    assert (dogs.id, dogs.title) == ("OR123", "Dogs")
    assert cats.id == text_id(cats.abstract) and cats.title == ""


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_reading_any_text_never_crashes(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "f.txt").write_text(text, errors="surrogatepass") if "\ud800" not in text else None
    (folder / "g.jsonl").write_bytes(text.encode("utf-8", "replace"))
    report = read_paths([folder])
    for paper in report.papers:
        assert paper.abstract == clean_text(paper.abstract) and paper.abstract


@given(st.text(max_size=200))
def test_normalize_is_idempotent(text):
    assert normalize_text(normalize_text(text)) == normalize_text(text)


def test_gzipped_json_lines_are_read_as_they_are(tmp_path):
    import gzip

    rows = [
        {"id": "a1", "title": "T", "abstract": "Some abstract text.", "status": "ICLR 2025 Oral",
         "primary_area": "optimization"},
        {"id": "a2", "title": "U", "abstract": "Another abstract.", "status": "Submitted to ICLR 2025"},
    ]  # fmt: skip
    path = tmp_path / "conference.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))
    report = read_paths([path])
    assert [p.id for p in report.papers] == ["a1", "a2"] and not report.errors
    first, second = report.papers
    assert (first.status, first.venue, first.extra["primary_area"]) == ("oral", "ICLR 2025", "optimization")
    assert (second.status, second.venue) == ("submitted", "ICLR 2025")
    # Cut short: the lines before the cut are read, the file is named in an error.
    data = path.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) - 12])
    report = read_paths([cut])
    assert report.errors and "truncated" in report.errors[0].message
