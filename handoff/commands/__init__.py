"""The commands of `handoff`, each a function whose parameters are its options and whose
exit says how it went (handoff/cli.py gives each its name): running.py runs and stores,
reading.py reads what is stored, tools.py is the rest; common.py what they share."""
