"""Rendering a judged run: the terminal output (terminal.py), Markdown, JSON and the HTML
report (formats.py, html.py), a diff of two runs (diff.py), the tables of runs and
sessions (listing.py, sessions.py). Pure functions of the record and its judgement, so a
stored run renders exactly as it did when it ran, and everything here is tested without
a runtime."""
