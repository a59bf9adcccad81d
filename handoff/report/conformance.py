"""What `handoff conform` prints: a row per property with its outcome and why, fitted to
the terminal, what this version does not run, and the verdict."""

from __future__ import annotations

from handoff.conform.suite import Outcome, Report
from handoff.report import fit

HEADERS = ["property", "outcome", "why"]


def rendered(report: Report) -> str:
    rows = [[row.name + ("" if row.required else " (optional)"), row.outcome, row.reason] for row in report.rows]
    held = sum(1 for row in report.rows if row.required and row.outcome == Outcome.OK)
    required = sum(1 for row in report.rows if row.required)
    verdict = ("it keeps the contract" if report.passed_required() else "it does NOT keep the contract")
    return "\n\n".join([
        fit.paragraph(f"SessionFs provider {report.provider}: the contract, op by op through the SDK's adapter, "
                      f"then persistence through it on the real runtime"),
        fit.table(rows, HEADERS, wraps=(0, 2), unpadded=True),
        *(fit.paragraph(f"Not run: {text}") for text in report.not_run),
        fit.paragraph(f"{held} of {required} required rows hold: {verdict}."),
    ])
