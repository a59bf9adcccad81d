"""Benchmark 6: one handoff on each kind of host — a process here, a namespace host, a
container, a pod — side by side in one run.

Each kind runs its scenario of the ladder whose two steps share the home (create, tell,
close on A; resume, ask, close on B): ``cross-process`` (two worker processes on this
machine, forked from the zygote, and once more spawned as new interpreters, which is how
a container's worker starts), ``cross-machine-shared-dir`` (two namespace hosts, workers
forked from the zygote and moved in), ``cross-container-volume`` (two podman
containers from the worker image, one named volume) and ``cross-pod-claim`` (each step's
exported Kubernetes objects played by ``podman kube play``, one claim). Each is a ``handoff run SCENARIO
--json`` subprocess, as a user runs it, and the kinds take turns in every round (the
order rotates), so that none always runs on a warmer or quieter machine.

From each run's record: the **scenario** time (its hosts made, both steps, its hosts
removed; the run's own start — witness, LAN, container network, image check — is not in
it); **B: start to ready**, from the moment the coordinator starts step B's worker to the
worker's ``ready`` line (a process or container started, the SDK imported unless forked,
a runtime up); and **B: whole step**. CPU: the whole ``handoff run`` (this process's
reaped children, conmon and the containers' processes included, since the run is a
child subreaper), and what the workers and their runtimes report of it. A run counts
only if it exits 0 (the scenario came out as its file expects).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass, field

from bench.machine import cores
from bench.procs import PROJECT_ROOT, Bench, handoff_command, run_record
from bench.report import Section, Table
from bench.stats import Summary, fmt

RUN_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True)
class Kind:
    label: str
    scenario: str
    options: tuple[str, ...] = ()


KINDS = (
    Kind("local process (forked)", "cross-process"),
    Kind("local process (spawned)", "cross-process", ("--spawn-workers",)),
    Kind("namespace host (forked)", "cross-machine-shared-dir"),
    Kind("container (podman)", "cross-container-volume"),
    Kind("pod (podman kube play)", "cross-pod-claim"),
)


@dataclass
class Samples:
    counted: int = 0
    scenario_s: list[float] = field(default_factory=list)
    ready_ms: list[float] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    run_cpu: list[float] = field(default_factory=list)
    worker_cpu: list[float] = field(default_factory=list)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _note(samples: Samples, record, cpu: float) -> str | None:
    """Add one run's numbers; returns why they cannot be used, if so."""
    [scenario] = record.scenarios
    if scenario.skipped:
        return f"skipped: {scenario.skipped}"
    b = scenario.steps[-1]
    view = b.view()
    if view.ready is None:
        return "step B reported no ready line"
    samples.counted += 1
    samples.scenario_s.append(scenario.seconds)
    samples.ready_ms.append((view.ready.t - b.started_at) * 1000)
    samples.step_ms.append((b.ended_at - b.started_at) * 1000)
    samples.run_cpu.append(cpu)
    reports = [f.cpu_s for step in scenario.steps if (f := step.view().finished) and f.cpu_s]
    samples.worker_cpu.append(sum(r.worker + r.runtime for r in reports))
    return None


async def run(bench: Bench, repeats: int) -> Section:
    section = Section("hosts", "6. One handoff per kind of host: process, namespace host, container, pod",
                      method=__doc__.split("\n\n", 1)[1].strip())
    samples = {kind: Samples() for kind in KINDS}
    for number in range(repeats):
        shift = number % len(KINDS)
        for kind in KINDS[shift:] + KINDS[:shift]:
            results = bench.new_dir("hosts") / "results.json"
            before = _children_cpu()
            done = await bench.run(*handoff_command("run", kind.scenario, *kind.options, "--json", str(results),
                                                    "--runs-dir", str(bench.runs_dir)),
                                   timeout=RUN_TIMEOUT_SECONDS, graceful=True, cwd=PROJECT_ROOT)
            cpu = _children_cpu() - before
            record = run_record(results)
            problem = None
            if done.exit_code != 0 or record is None:
                last = (done.stdout.strip().splitlines() or done.stderr_tail.strip().splitlines() or [""])[-1]
                problem = f"{'timed out' if done.timed_out else f'exit code {done.exit_code}'} ({last})"
            else:
                problem = _note(samples[kind], record, cpu)
            if problem:
                section.problems.append(f"{kind.label}, round {number + 1}: {problem}; not counted")
    rows = [[kind.label, kind.scenario + "".join(f" {option}" for option in kind.options),
             f"{samples[kind].counted}/{repeats}", fmt(Summary.of(samples[kind].scenario_s), digits=2),
             fmt(Summary.of(samples[kind].ready_ms)), fmt(Summary.of(samples[kind].step_ms)),
             fmt(Summary.of(samples[kind].run_cpu), digits=1), fmt(Summary.of(samples[kind].worker_cpu), digits=1)]
            for kind in KINDS]
    section.tables.append(Table(
        ["host", "scenario", "runs counted", "scenario, s", "B: start to ready, ms", "B: whole step, ms",
         "CPU of the run, s", "of it in workers + runtimes, s"],
        rows, caption="median (min–max) per kind, kinds alternated in every round"))
    _findings(section, samples)
    return section


def _findings(section: Section, samples: dict[Kind, Samples]) -> None:
    forked, spawned, namespace, container, pod = (Summary.of(samples[kind].ready_ms) for kind in KINDS)
    whole = {kind: Summary.of(samples[kind].scenario_s) for kind in KINDS}
    if container and spawned:
        section.findings.append(
            f"Step B's worker is ready {container.median:.0f} ms after it is started in a new container, against "
            f"{spawned.median:.0f} ms for a new interpreter here, {forked.median if forked else float('nan'):.0f} ms "
            f"for a fork of the zygote and {namespace.median if namespace else float('nan'):.0f} ms for a fork moved "
            f"into a namespace host (medians): a container pays for the engine's start and the SDK's import, which a "
            f"forked worker does not.")
    if whole[KINDS[3]] and whole[KINDS[0]] and whole[KINDS[2]]:
        section.findings.append(
            f"The whole handoff (two steps, hosts made and removed) took {whole[KINDS[0]].median:.2f} s on this "
            f"machine, {whole[KINDS[2]].median:.2f} s across namespace hosts and {whole[KINDS[3]].median:.2f} s "
            f"across containers ({whole[KINDS[3]].median / whole[KINDS[0]].median:.2f}× the local time; ratio of "
            f"medians, on {cores()} cores).")
    if pod and container and whole[KINDS[4]] and whole[KINDS[3]]:
        section.findings.append(
            f"A step played from its exported Kubernetes objects (`podman kube play` of its ConfigMap and Pod, then "
            f"the worker's container started attached) is ready {pod.median:.0f} ms after it is started, against "
            f"{container.median:.0f} ms for `podman run` of a container; the handoff took "
            f"{whole[KINDS[4]].median:.2f} s across pods and {whole[KINDS[3]].median:.2f} s across containers "
            f"(medians). Most of the difference is the runtime's own start: the Job gives the worker an emptyDir "
            f"as its HOME, so the runtime unpacks itself there on every start, where a container host keeps its "
            f"user directory between containers.")
