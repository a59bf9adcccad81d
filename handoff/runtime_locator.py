"""Finding the Copilot runtime executable.

``COPILOT_CLI_PATH`` wins (the SDK reads the same variable). Otherwise the runtime that
``make setup`` installed with npm into ``runtime/node_modules``: npm puts the real,
self-contained executable in a platform package such as ``@github/copilot-linux-x64``.
The SDK's own download goes to GitHub release assets, which an offline machine cannot
reach, so it is never relied on.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from handoff.errors import UserError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RUNTIME_DIR = PROJECT_ROOT / "runtime" / "node_modules" / "@github"
PINNED_RUNTIME = "1.0.102"

_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def platform_package() -> str:
    """npm's name for this platform's runtime package, e.g. ``copilot-linux-x64``."""
    arch = _ARCH.get(platform.machine().lower(), platform.machine().lower())
    return f"copilot-{sys.platform}-{arch}"


def locate_runtime() -> Path:
    override = os.environ.get("COPILOT_CLI_PATH")
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UserError(f"COPILOT_CLI_PATH={override} is not an executable file: fix the path or unset it")
        return path
    executable = "copilot.exe" if sys.platform == "win32" else "copilot"
    path = RUNTIME_DIR / platform_package() / executable
    if not path.is_file():
        raise UserError(f"no Copilot runtime found at {path}: run `make setup` (or set COPILOT_CLI_PATH)")
    return path
