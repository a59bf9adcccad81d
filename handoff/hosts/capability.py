"""Whether this machine can make hosts of a kind: asked before a scenario runs (it is
skipped with the reason when not) and by `handoff doctor`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from handoff.hosts.ssh import SSHD
from handoff.words import HostKind

CATATONIT = ("/usr/bin/catatonit", "/usr/libexec/podman/catatonit")  # where podman looks for it


def missing_capability(kind: str) -> str | None:
    """Why this machine cannot make hosts of ``kind``, or None when it can."""
    if kind == HostKind.LOCAL:
        return None
    if os.geteuid() != 0:
        return ("simulated hosts need root for network and mount namespaces, and container hosts for the LAN "
                "their services listen on (use --host NAME=ssh://... for a real machine)")
    for tool, package in (("ip", "iproute2"), ("unshare", "util-linux")):
        if shutil.which(tool) is None:
            return f"`{tool}` is missing: install {package} (make setup does, as root)"
    if kind == HostKind.POD and not any(Path(place).is_file() for place in CATATONIT):
        return ("`podman kube play` starts each pod with an infra container that runs catatonit: install catatonit "
                "(make setup does, as root)")
    if kind in (HostKind.CONTAINER, HostKind.POD):
        return None  # the engine, the image and the LAN are checked when a run starts (coordinator/run_containers.py)
    if kind == HostKind.SSH:
        if not Path(SSHD).is_file():
            return f"{SSHD} is missing: install openssh-server (make setup does, as root)"
        for tool in ("ssh", "ssh-keygen"):
            if shutil.which(tool) is None:
                return f"`{tool}` is missing: install openssh-client (make setup does, as root)"
    return None
