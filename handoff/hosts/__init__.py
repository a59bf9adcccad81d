"""Hosts: where a step's worker runs (base.py says what a host is), and how workers get
there (zygote.py forks them, entering.py moves a forked one into a namespace host,
container.py starts one in a container). capability.py says which kinds this machine can
make."""
