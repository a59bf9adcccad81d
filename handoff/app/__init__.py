"""The application: what each command does, apart from how it is asked for (handoff/cli.py
maps options to these and results to exit codes). execute.py runs a plan of scenarios
and keeps its record and judgement, for `handoff run` (matrix.py) and `handoff skew`
(grid.py); lab.py keeps each lab run the same way; outputs.py writes what a run is asked
to write; sessions.py lists sessions from what a user has."""
