"""Bringing a conference or an arXiv query in: `citewise fetch openreview VENUE_ID` and `citewise
fetch arxiv QUERY` write a JSONL that `citewise ingest` reads, page by page, resumable after a kill."""
