"""Question to ranked papers: the hybrid retrievers, metadata filters, and the best sentences of the
ranked papers within a token budget (the evidence)."""
