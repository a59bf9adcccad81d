"""copilot-handoff: measure what Copilot SDK session persistence keeps, and where."""

__version__ = "0.1.0"
