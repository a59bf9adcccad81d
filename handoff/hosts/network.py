"""The simulated LAN that namespace hosts live on: one Linux bridge per run.

The bridge holds the coordinator's address on the LAN (``10.213.X.1``); every namespace
host gets its own network namespace joined to the bridge by a veth pair and its own
address (``10.213.X.N``). The witness model listens on the bridge address, so a host
reaches it over its link, never over a shared loopback. Local workers reach the same
address directly, since it is an address of this machine.

Everything made here is recorded and removed by :meth:`Lan.close`, which the run calls
on success, failure and Ctrl-C alike. Scenarios make their hosts from threads, so that
the coordinator's event loop goes on meanwhile; a lock keeps their numbers apart.
"""

from __future__ import annotations

import contextlib
import ipaddress
import random
import secrets
import subprocess
import threading

from handoff import owners

PREFIX = "10.213"
NETNS_DIR = "/var/run/netns"  # where `ip netns add` keeps a named namespace


class NetworkError(Exception):
    """An `ip` command failed; the message carries the command and what it said."""


IP_TIMEOUT = 30.0  # seconds; an `ip` that hangs must not hold a host's thread, and so a Ctrl-C, for ever


def ip(*args: str) -> str:
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise NetworkError(f"`ip {' '.join(args)}` did not end in {IP_TIMEOUT:g} s") from None
    if done.returncode != 0:
        raise NetworkError(f"`ip {' '.join(args)}` failed: {done.stderr.strip()}")
    return done.stdout


def ip_batch(commands: list[list[str]], *options: str, check: bool = True) -> None:
    """Several `ip` commands in one process (`ip -batch`): a host costs two processes,
    not eight. The first that fails stops the batch (unless ``-force`` is an option)."""
    script = "".join(" ".join(command) + "\n" for command in commands)
    try:
        done = subprocess.run(["ip", *options, "-batch", "-"], input=script, capture_output=True, text=True,
                              timeout=IP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise NetworkError(f"`ip {' '.join(options)} -batch` did not end in {IP_TIMEOUT:g} s") from None
    if check and done.returncode != 0:
        raise NetworkError(f"`ip {' '.join(options)} -batch` failed: {done.stderr.strip()}")


def _networks_in_use() -> list[ipaddress.IPv4Network]:
    return [ipaddress.ip_interface(line.split()[3]).network for line in ip("-o", "-4", "addr").splitlines()]


class Lan:
    def __init__(self) -> None:
        # The owner's pid in every name, for a person reading them; the run's ledger
        # (owners.py) is what tells what a killed run left (leftovers.py) from look-alikes.
        self.tag = owners.tag() + secrets.token_hex(2)  # (a link's name has room for 15 characters)
        self.bridge = f"hbr{self.tag}"
        self._namespaces: list[str] = []
        self._links: list[str] = []
        self._next_host = 2
        self._lock = threading.Lock()
        used = _networks_in_use()
        free = [
            x for x in range(1, 255)
            if not any(ipaddress.ip_network(f"{PREFIX}.{x}.0/24").overlaps(network) for network in used)
        ]
        if not free:
            raise NetworkError(f"no free {PREFIX}.X.0/24 subnet for the simulated hosts")
        self.subnet = f"{PREFIX}.{random.choice(free)}"
        self.gateway = f"{self.subnet}.1"
        self._links.append(self.bridge)
        owners.note(owners.LINK, self.bridge)
        # A bridge without an address of its own takes the lowest MAC of its ports and
        # changes it as hosts come and go; the hosts' ARP entries for the gateway then go
        # stale and their packets are lost for tens of seconds. A fixed, locally
        # administered MAC keeps the gateway where the hosts learned it.
        mac = "02:" + ":".join(f"{b:02x}" for b in secrets.token_bytes(5))
        ip_batch([["link", "add", self.bridge, "address", mac, "type", "bridge"],
                  ["addr", "add", f"{self.gateway}/24", "dev", self.bridge],
                  ["link", "set", self.bridge, "up"]])

    def add_host(self, name: str) -> tuple[str, str]:
        """Make a network namespace on the LAN; returns (namespace name, host address)."""
        with self._lock:
            number = self._next_host
            self._next_host += 1
            namespace = f"handoff-{self.tag}-{number}-{name}"
            outside, inside = f"hv{self.tag}{number}", f"hp{self.tag}{number}"
            # Recorded before they exist: close() removes whatever part of them was made,
            # and `handoff clean` what a killed run made (the run's ledger, owners.py).
            self._namespaces.append(namespace)
            self._links.append(outside)
            for kind, name in ((owners.NAMESPACE, namespace), (owners.LINK, outside), (owners.LINK, inside)):
                owners.note(kind, name)
        address = f"{self.subnet}.{number}"
        ip_batch([["netns", "add", namespace],
                  ["link", "add", outside, "type", "veth", "peer", "name", inside],
                  ["link", "set", inside, "netns", namespace],
                  ["link", "set", outside, "master", self.bridge],
                  ["link", "set", outside, "up"]])
        ip_batch([["addr", "add", f"{address}/24", "dev", inside],
                  ["link", "set", inside, "up"],
                  ["link", "set", "lo", "up"]], "-n", namespace)
        return namespace, address

    def remove_host(self, namespace: str) -> None:
        """Delete a host's namespace; its veth pair goes with it."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=IP_TIMEOUT)
        with self._lock:
            if namespace in self._namespaces:
                self._namespaces.remove(namespace)

    def close(self) -> None:
        """Remove every namespace, then every link, in one `ip` process; `-force` goes on
        past what is already gone (a veth pair leaves with its namespace)."""
        with self._lock:
            commands = [["netns", "del", namespace] for namespace in reversed(self._namespaces)]
            commands += [["link", "del", link] for link in reversed(self._links)]
            self._namespaces.clear()
            self._links.clear()
        if commands:
            with contextlib.suppress(NetworkError):  # what is left is found by `handoff clean` (leftovers.py)
                ip_batch(commands, "-force", check=False)
