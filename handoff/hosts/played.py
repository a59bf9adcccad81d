"""Pod hosts: each step played from its Kubernetes objects with ``podman kube play``.

A scenario whose hosts are ``pod`` runs what `handoff export k8s` gives a cluster: for
each step, the Secret holding its spec and the Job that runs ``python -m handoff.worker
--spec FILE`` on it (hosts/pod.py), made playable by one small transformation
(hosts/kube_play.py: the Job as a Pod, the Secret as a ConfigMap, the Service's name as a
host alias, the local image with the software mounted). The coordinator runs the steps as
it runs every other host's, so a step's worker is told the run's witness, reached by the
Service's name, and the verdicts are judged the same way.

Each step:
* its spec arrives on stdin, as for every host; a small process of ours (``python -m
  handoff.hosts.played``, this module) turns it into the step's objects, plays them
  without starting them, and becomes ``podman start --attach`` of the worker's container,
  whose stdout is the worker's events (its pod's log);
* its home is a claim played beside it: the steps given one home mount one claim (what a
  ReadWriteMany claim gives a cluster), a step given its own home a claim of its own, where
  the export has an emptyDir (no other pod mounts either);
* its pod is on the run's container network, an engine bridge: podman 4.3 cannot put a pod
  in a network namespace made outside it, as the container hosts' are. From there it
  reaches the run's witness and PostgreSQL at the simulated LAN's gateway, as docker's
  containers do (handoff/containers/network.py).

Pods, their ConfigMaps' and claims' volumes are named for the run's owner and removed when
the scenario ends, or by `handoff clean` after a SIGKILL. Not shown: scheduling on other
nodes, a cluster's network and DNS, other kernels; the witness's own Deployment is
checked apart (tests/e2e/test_played_pods.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import sysconfig
import sys
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from handoff.containers.engine import Engine, EngineError
from handoff.hosts.base import PIPES, PROJECT_ROOT, Launch
from handoff.hosts.container import PYTHON, ContainerSetup, software_mounts
from handoff.hosts.kube_play import Software, container_name, playable, spec_map
from handoff.hosts.pod import LABEL, WITNESS_NAME, WORKER, PodHost, claim, dns_label, step_objects
from handoff.processes import ProcessTracker
from handoff.worker.__main__ import first_line

PLAY_TIMEOUT = 60.0


class PlayedPodHost(PodHost):
    on_simulated_lan = True  # it reaches the run's services at the LAN gateway
    reaches_internet = False

    def __init__(self, name: str, setup: ContainerSetup, prefix: str, scenario: str):
        super().__init__(name)
        if setup.lan is None or setup.network is None:
            raise RuntimeError(f"host '{name}': pods need the simulated LAN and the run's container network")
        self.setup = setup
        self.engine = setup.engine
        self.prefix = prefix  # handoff-<owner>...-<scenario>: every pod and volume's name starts so
        self.labels = {"app.kubernetes.io/name": LABEL, f"{LABEL}/scenario": dns_label(scenario),
                       f"{LABEL}/host": dns_label(name)}
        self.lan_gateway = setup.lan.gateway
        self._pods: list[str] = []
        self._volumes: set[str] = set()

    def witness_url(self, url: str) -> str:
        """The Service's name, on the run's witness's port (the host alias leads to the LAN gateway)."""
        return f"http://{WITNESS_NAME}:{urlsplit(url).port}"

    async def start_worker(self, tracker: ProcessTracker, store: Path, stderr, cwd: Path, launch: Launch = Launch()):
        if launch != Launch():
            raise RuntimeError(f"host '{self.name}': a pod runs the image's worker only (no restart, other versions, "
                               "browser or anonymous volume)")
        pod = f"{self.prefix}-{self.name}{len(self._pods) + 1}"
        home = f"{self.prefix}-{store.name}"  # steps given the same home share its claim
        await self._claim(tracker, home, cwd)
        self._pods.append(pod)
        self._volumes.add(spec_map(pod))  # the ConfigMap's volume, which outlives its pod
        plan = {"pod": pod, "hostname": f"pod-{self.name}-{len(self._pods)}", "claim": home, "labels": self.labels,
                "image": self.setup.image, "network": self.setup.network, "witness_address": self.lan_gateway,
                "software": mounted_software(self.setup.runtime).__dict__, "file": str(cwd / f"{pod}.yaml")}
        return await tracker.spawn(sys.executable, "-m", "handoff.hosts.played", json.dumps(plan),
                                   env={**self.engine.env(), "PYTHONPATH": str(PROJECT_ROOT)}, stderr=stderr, **PIPES)

    async def _claim(self, tracker: ProcessTracker, name: str, cwd: Path) -> None:
        """Play the home's claim (podman makes it a volume), unless a step played it already."""
        if name in self._volumes or name in await asyncio.to_thread(self.engine.names, "volume"):
            self._volumes.add(name)
            return
        self._volumes.add(name)
        path = cwd / f"{name}.yaml"
        path.write_text(yaml.safe_dump(claim(name, self.labels), sort_keys=False), encoding="utf-8")
        # On the run's network: without one, podman would make its default kube network to leave behind.
        await self.engine.run(tracker, "kube", "play", "--network", self.setup.network, str(path), timeout=PLAY_TIMEOUT)

    async def close(self) -> None:
        """Remove the host's pods (their containers with them), then their volumes."""
        pods, volumes = list(self._pods), sorted(self._volumes)
        self._pods.clear()
        self._volumes.clear()
        await asyncio.to_thread(self.engine.remove_sync, "pod", pods)
        await asyncio.to_thread(self.engine.remove_sync, "volume", volumes)


def mounted_software(runtime: Path) -> Software:
    """What a pod is given of this machine in place of the cluster image's install."""
    packages = sysconfig.get_paths()["purelib"]
    return Software(mounts=tuple((str(here), str(there)) for here, there in software_mounts(runtime)), python=PYTHON,
                    python_path=f"{PROJECT_ROOT}:{packages}", runtime=str(runtime))


def main(argument: str) -> None:
    """Read the step's spec, play its objects, then become the attached worker's client."""
    plan = json.loads(argument)
    software = plan["software"]
    software = Software(tuple(map(tuple, software["mounts"])), software["python"], software["python_path"],
                        software["runtime"])
    spec = first_line().decode()  # the lines after it, releases from holds, have no use here
    labels = {**plan["labels"], f"{LABEL}/step": dns_label(json.loads(spec)["step"])}
    objects = step_objects(spec, plan["image"], plan["pod"], labels, plan["claim"])
    documents = playable(objects, plan["pod"], plan["hostname"], plan["image"], software, plan["witness_address"])
    Path(plan["file"]).write_text(yaml.safe_dump_all(documents, sort_keys=False), encoding="utf-8")
    engine = Engine("podman")
    try:
        engine.run_sync("kube", "play", "--start=false", "--network", plan["network"], plan["file"],
                        timeout=PLAY_TIMEOUT)
    except EngineError as error:
        print(f"the step's pod could not be played: {error}", file=sys.stderr)
        sys.exit(1)
    command = engine.command("start", "--attach", container_name(plan["pod"], WORKER))
    os.execvpe(command[0], command, engine.env())


if __name__ == "__main__":
    main(sys.argv[1])
