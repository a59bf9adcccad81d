"""`make bench` shows a `handoff run`'s progress as the run writes it off a terminal: one
line per finished scenario, passed on as it comes (a real child process here, standing in
for `handoff run`; its stderr is still kept whole for the bench's problem reports)."""

from __future__ import annotations

import asyncio
import sys

from bench.procs import Bench

CHILD = """
import sys, time
print("[1/2    1.0 s] same-process: kept, as expected (1.0 s)", file=sys.stderr, flush=True)
print("note: something else", file=sys.stderr, flush=True)
print("[2/2    2.0 s] no-id: lost, as expected (1.0 s)", file=sys.stderr, flush=True)
print("2 scenarios, 2 judged turns, 2 as expected")
"""


def test_progress_lines_are_passed_on_and_stderr_is_kept(capsys):
    bench = Bench()
    try:
        async def go():
            try:
                return await bench.run(sys.executable, "-c", CHILD, progress="--jobs 2, run 1:")
            finally:
                await bench.shutdown()

        done = asyncio.run(go())
    finally:
        bench.close()
    shown = capsys.readouterr().out.splitlines()
    assert shown == ["   --jobs 2, run 1: [1/2    1.0 s] same-process: kept, as expected (1.0 s)",
                     "   --jobs 2, run 1: [2/2    2.0 s] no-id: lost, as expected (1.0 s)"]
    assert done.exit_code == 0 and done.stdout.strip() == "2 scenarios, 2 judged turns, 2 as expected"
    assert "note: something else" in done.stderr_tail
