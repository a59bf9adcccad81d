"""Hosts: where a step's worker runs (base.py says what a host is), and how workers get
there (zygote.py forks them, entering.py moves a forked one into a namespace host,
container.py starts one in a container)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from handoff.hosts.base import Host, Launch
from handoff.hosts.container import ContainerHost
from handoff.hosts.local import LocalHost
from handoff.hosts.namespace import NamespaceHost
from handoff.hosts.network import Lan, NetworkError
from handoff.hosts.ssh import SSHD, NamespaceSshHost, SshHost, SshTarget
from handoff.words import HostKind

__all__ = ["ContainerHost", "Host", "Launch", "LocalHost", "NamespaceHost", "NamespaceSshHost", "SshHost", "SshTarget",
           "Lan", "NetworkError", "missing_capability"]


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
    if kind == HostKind.CONTAINER:
        return None  # the engine, the image and the LAN are checked when a run starts (containers/service.py)
    if kind == HostKind.SSH:
        if not Path(SSHD).is_file():
            return f"{SSHD} is missing: install openssh-server (make setup does, as root)"
        for tool in ("ssh", "ssh-keygen"):
            if shutil.which(tool) is None:
                return f"`{tool}` is missing: install openssh-client (make setup does, as root)"
    return None
