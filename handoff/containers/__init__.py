"""Real containers on a real engine (podman by default, Docker when a daemon is reachable).

* engine.py — which engine, how it is called, whether it is usable here, and the names
  of what the tool made in it (containers, volumes, networks), for cleanup;
* image.py — the worker image: described by the project's ``Containerfile``, built
  offline from Debian's packages (debootstrap, then an import) and cached by content hash;
* network.py — the bridge network of one run on an engine that cannot join the simulated
  LAN (docker), routed to the run's services;
* lifeline.py — the connection every container holds to its run: when the run dies,
  even by SIGKILL, the kernel closes it and the container's worker ends.

The host kind that runs a step's worker in a container is handoff/hosts/container.py.
"""
