"""One learned decision per answer over all the signals: signals.py (the features), selector.py
(the trained model and its threshold), stage.py (the `select` stage that carries it out)."""
