"""Errors a user can fix. The CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input or a missing prerequisite: the message says what is wrong and how to fix it."""
