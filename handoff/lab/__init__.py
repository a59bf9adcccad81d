"""`handoff lab`: Lab 05 ("sessions") as the lab prints it, on the real runtime (runner.py
says why it exists and what it exits with; transcript.py is the transcript)."""
