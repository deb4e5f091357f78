"""Papers in: readers and formats, records, chunking, embedding, the Chroma store with its keyword
index and sentence vectors, and ingest."""
