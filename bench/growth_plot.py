"""The growth bench's log-log plot: bytes written a byte appended, and append p50, against
the events in the log, a line per store (matplotlib, from the ``bench`` extra). Drawn as
an SVG beside BENCHMARKS.md's block, with no date in it, so a file that did not change
does not show as changed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.growth import Grown

STYLES = {"file": ":", "SQLite": "-", "PostgreSQL": "--"}  # a line's dash says which database


def plot(results: list[Grown], path: Path) -> str | None:
    """Draw the plot into ``path``; None, or why it was not drawn."""
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as pyplot
    except ImportError as error:
        return f"the plot was not drawn: {error.name} is not installed (pip install -e '.[bench]')"
    pyplot.rcParams["svg.hashsalt"] = "bench-growth"  # the same ids every time
    figure, (written, appended) = pyplot.subplots(1, 2, figsize=(12, 5), layout="constrained")
    for grown in results:
        if not grown.windows:
            continue
        sizes = [window.size for window in grown.windows]
        style = {"linestyle": STYLES.get(grown.store.database, "-"), "marker": "o", "label": grown.store.name}
        written.plot(sizes, [window.written_ratio for window in grown.windows], **style)
        appended.plot(sizes, [window.p50_ms for window in grown.windows], **style)
    for axes, label in ((written, "bytes written per byte appended"), (appended, "append p50 (ms)")):
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("events in the log")
        axes.set_ylabel(label)
        axes.grid(True, which="major", alpha=0.3)
    written.set_title("What an append writes (flat: the same at every size)")
    appended.set_title("What an append takes")
    appended.legend(fontsize="small")
    figure.savefig(path, format="svg", metadata={"Date": None})
    pyplot.close(figure)
    return None
