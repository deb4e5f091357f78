"""The answer selector: its training data (collect.py) and its training (train.py)."""
