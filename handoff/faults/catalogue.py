"""Every fault kind's class, by its kind: what a scenario's fault plan becomes."""

from __future__ import annotations

from handoff.faults.base import Fault
from handoff.faults.logs import CorruptLog, CutCopy, Tamper, TearLog
from handoff.faults.machines import DiskFull, Partition, StoreOutage, StoreRestart
from handoff.faults.processes import Kill, KillRuntime

CLASSES = {kind.kind: kind for kind in (Kill, KillRuntime, StoreOutage, StoreRestart, Partition, DiskFull, TearLog,
                                        CorruptLog, CutCopy, Tamper)}


def build(plan) -> Fault:
    """The fault a scenario's plan (handoff.scenario.FaultPlan) asks for."""
    return CLASSES[plan.kind].from_plan(plan)
