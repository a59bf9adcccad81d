"""`handoff skew`: does a session survive a change of runtime or SDK version, both ways?
grid.py plans the grid's cells, each an ordinary scenario; expected.py reads what each
cell is expected to come to."""
