"""The `handoff` executable and `python -m handoff`.

The command line (handoff/cli.py) imports typer and every command's options, a few tenths
of a second in which a Ctrl-C would end in a traceback: this door is opened first, and
imports nothing that could take long before it catches one.
"""

import sys

INTERRUPTED = 130  # handoff.checker.verdicts.ExitCode.INTERRUPTED, not imported: it is what takes the time


def main() -> None:
    try:
        from handoff.cli import main as command
    except KeyboardInterrupt:
        print("error: interrupted while the tool was loading; nothing was started", file=sys.stderr)
        sys.exit(INTERRUPTED)
    command()


if __name__ == "__main__":
    main()
