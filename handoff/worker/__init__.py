"""A worker: one step of a scenario in its own OS process, with its own runtime."""
