"""Where sessions are kept: a step's home on this machine (step_homes.py), what a Copilot
home holds (homes.py), a database reached through the SDK's SessionFs (database.py,
files.py), the run's throwaway PostgreSQL (postgres_server.py) and the session registry
beside the session files (registry.py, shared.py)."""
