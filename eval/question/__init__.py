"""Evaluation and training of the question's reading against the conversation (rag/question/)."""
