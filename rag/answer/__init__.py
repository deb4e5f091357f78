"""Intent to answer: the prompt, the pipeline that streams events, the named stages after
generation, trust (checks and refusal rules), completion of missing parts, citations, and claim
verification."""
