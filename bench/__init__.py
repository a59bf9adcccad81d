"""Benchmarks for copilot-handoff (issue 7): ``python -m bench [--quick]``, or ``make bench``.

Kept out of the ``handoff`` package and out of ``make test`` on purpose: timings depend
on the machine and on what else runs on it, so they are reported (medians and ranges in
BENCHMARKS.md), never asserted. Everything here drives the tool and the runtime from the
outside, the way a user or an app would; ``bench/bare_sdk.py`` is the baseline written
against the bare SDK.
"""
