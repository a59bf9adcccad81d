"""The checker: verdicts from a stored run's evidence (checks.py), in the vocabulary of
verdicts.py. (Nothing is imported here, so that the scenario loader can use the
vocabulary without loading the checker.)"""
