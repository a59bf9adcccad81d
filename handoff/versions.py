"""Runtime and SDK versions: which ones this checkout can run, where each lives, their order.

Every step runs the default pair — SDK 1.0.25 in ``.venv``, runtime 1.0.102 in
``runtime/`` — unless it names another version. Other versions are pinned in the
project, one folder each, and installed by ``make runtimes`` (never committed):

* runtime ``V``: ``runtimes/V/package.json`` + ``package-lock.json``, installed by npm into
  ``runtimes/V/node_modules``. A runtime unpacks itself on its first start into
  ``$XDG_CACHE_HOME/copilot/pkg/``; each version other than the default gets a cache of
  its own (``.state/runtime-cache/V``), because a runtime that is started without
  ``--no-auto-update`` hands off to the newest version it finds in its cache;
* SDK ``V``: ``sdks/V/requirements.txt``, every package pinned, installed into the
  virtual environment ``.state/sdks/V``.

Nothing here starts a process or imports the SDK; the worker imports only :func:`older`
and :func:`key` (through the guard).
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from handoff.errors import UserError
from handoff.runtime_locator import PINNED_RUNTIME, PROJECT_ROOT, locate_runtime, platform_package
from handoff.words import Action, SdkLanguage

SDK_DISTRIBUTION = "github-copilot-sdk"
INSTALL_COMMAND = "make runtimes"
RUNTIMES_DIR = PROJECT_ROOT / "runtimes"  # runtimes/<version>/ : the pins, and node_modules once installed
SDKS_DIR = PROJECT_ROOT / "sdks"  # sdks/<version>/requirements.txt
SDK_VENVS = PROJECT_ROOT / ".state" / "sdks"  # .state/sdks/<version>/ : the virtual environments
RUNTIME_CACHES = PROJECT_ROOT / ".state" / "runtime-cache"  # .state/runtime-cache/<version>/ : XDG_CACHE_HOME
# The Node.js worker: package.json + lock pinning the TypeScript SDK, its worker script, and
# node_modules once `make setup` installed it. A step names it as ``sdk = "node@1.0.14"``.
NODE_WORKER_DIR = SDKS_DIR / "node"
NODE_SDK_PACKAGE = "@github/copilot-sdk"
NODE_PREFIX = f"{SdkLanguage.NODE}@"
NODE_INSTALL_COMMAND = "make setup"
# What sdks/node/worker.mjs does; it reports every other action as an error event (the
# guard, holds and a second runtime are the Python worker's).
NODE_WORKER_ACTIONS = frozenset({Action.CREATE, Action.CREATE_WITHOUT_ID, Action.RESUME, Action.RESUME_MOST_RECENT,
                                 Action.TELL, Action.ASK, Action.CLOSE, Action.METADATA, Action.LIST,
                                 Action.DISCOVER})

_VERSION = re.compile(r"(\d{1,9})\.(\d{1,9})\.(\d{1,9})")  # no release numbers its parts past nine digits


class NotAvailable(Exception):
    """A version this checkout cannot run; the message says why and what to do."""


def well_formed(version: str) -> bool:
    """``1.0.92``: three numbers, as npm and PyPI spell these releases."""
    return _VERSION.fullmatch(version) is not None


def key(version: str) -> tuple[int, ...]:
    """Sort key: ``1.0.92`` before ``1.0.102``."""
    found = _VERSION.match(version)
    if found is None:
        raise ValueError(f"not a version number: {version!r}")
    return tuple(int(part) for part in found.groups())


def older(version: str, than: str) -> bool:
    return key(version) < key(than)


def is_node(sdk_name: str | None) -> bool:
    """Whether a step's ``sdk`` names the Node.js SDK (``node@1.0.14``) rather than a Python one."""
    return bool(sdk_name) and sdk_name.startswith(NODE_PREFIX)


def well_formed_sdk(sdk_name: str) -> bool:
    """A Python SDK version (``1.0.24``) or the Node.js SDK at one (``node@1.0.14``)."""
    return well_formed(sdk_name.removeprefix(NODE_PREFIX))


def sdk_key(sdk_name: str) -> tuple[int, ...]:
    """Sort key of a step's ``sdk``: the Python SDKs by version, then the Node.js SDK's."""
    if is_node(sdk_name):
        return (1, *key(sdk_name.removeprefix(NODE_PREFIX)))
    return (0, *key(sdk_name))


def pinned_node_sdk() -> str | None:
    """The Node.js SDK sdks/node/package.json pins, as a step names it (``node@1.0.14``)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return NODE_PREFIX + json.loads((NODE_WORKER_DIR / "package.json").read_text())["dependencies"][NODE_SDK_PACKAGE]
    return None


def default_sdk(pyproject: Path = PROJECT_ROOT / "pyproject.toml") -> str | None:
    """The SDK version the project pins (``github-copilot-sdk==X`` in pyproject.toml)."""
    with contextlib.suppress(OSError, tomllib.TOMLDecodeError, KeyError):
        for requirement in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
            name, _, version = requirement.partition("==")
            if name.strip() == SDK_DISTRIBUTION:
                return version.strip()
    return None


DEFAULT_RUNTIME = PINNED_RUNTIME
DEFAULT_SDK = default_sdk() or "1.0.25"


@dataclass(frozen=True)
class RuntimeInstall:
    version: str
    executable: Path
    cache: Path | None  # the XDG_CACHE_HOME it unpacks into; None: its host's own (the default runtime)


@dataclass(frozen=True)
class SdkInstall:
    version: str
    python: Path | None  # the interpreter of its virtual environment; None: this one (the default SDK)
    node_worker: Path | None = None  # the Node.js SDK: the worker script node runs


def pinned_runtimes() -> list[str]:
    """The default runtime and every version with pins under runtimes/, oldest first."""
    pinned = {p.parent.name for p in RUNTIMES_DIR.glob("*/package-lock.json") if well_formed(p.parent.name)}
    return sorted(pinned | {DEFAULT_RUNTIME}, key=key)


def pinned_sdks() -> list[str]:
    pinned = {p.parent.name for p in SDKS_DIR.glob("*/requirements.txt") if well_formed(p.parent.name)}
    return sorted(pinned | {DEFAULT_SDK}, key=key)


def runtime(version: str) -> RuntimeInstall:
    """Where runtime ``version`` is installed; NotAvailable when it is not pinned or not installed."""
    if version == DEFAULT_RUNTIME:
        return RuntimeInstall(version, locate_runtime(), None)
    if version not in pinned_runtimes():
        raise NotAvailable(f"runtime {version} is not pinned by this project (pinned: {', '.join(pinned_runtimes())}); "
                           f"to add it, make runtimes/{version}/ with its package.json and package-lock.json")
    executable = RUNTIMES_DIR / version / "node_modules" / "@github" / platform_package() / "copilot"
    if not executable.is_file():
        raise NotAvailable(f"runtime {version} is not installed: run `{INSTALL_COMMAND}`")
    return RuntimeInstall(version, executable, RUNTIME_CACHES / version)


def sdk(version: str) -> SdkInstall:
    """Where SDK ``version`` is installed; NotAvailable when it is not pinned or not installed."""
    if version == DEFAULT_SDK:
        return SdkInstall(version, None)
    if is_node(version):
        return _node_sdk(version)
    if version not in pinned_sdks():
        raise NotAvailable(f"SDK {version} is not pinned by this project (pinned: {', '.join(pinned_sdks())}); "
                           f"to add it, make sdks/{version}/requirements.txt")
    python = SDK_VENVS / version / "bin" / "python"
    if not (SDK_VENVS / version / ".installed").is_file() or not python.exists():
        raise NotAvailable(f"SDK {version} is not installed: run `{INSTALL_COMMAND}`")
    return SdkInstall(version, python)


def runtime_pinned_by(cli_version_file: Path) -> str | None:
    """The runtime a Python SDK pins: ``CLI_VERSION`` in its ``copilot/_cli_version.py``,
    read as text (never imported: it may be another SDK's)."""
    with contextlib.suppress(OSError, SyntaxError, UnicodeDecodeError):
        for node in ast.parse(cli_version_file.read_text(encoding="utf-8")).body:
            target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
            if (isinstance(target, ast.Name) and target.id == "CLI_VERSION" and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                return node.value.value
    return None


def sdk_pinned_runtime(version: str) -> str | None:
    """The runtime installed SDK ``version`` (of those in .state/sdks/) pins, or None."""
    found = sorted((SDK_VENVS / version).glob("lib/python*/site-packages/copilot/_cli_version.py"))
    return runtime_pinned_by(found[-1]) if found else None


def _node_sdk(sdk_name: str) -> SdkInstall:
    pinned = pinned_node_sdk()
    if sdk_name != pinned:
        raise NotAvailable(f"SDK {sdk_name} is not pinned by this project (the Node.js worker pins {pinned}, in "
                           f"sdks/node/package.json)")
    if shutil.which("node") is None:
        raise NotAvailable("the Node.js worker needs node on the PATH: install Node.js 20+")
    if not (NODE_WORKER_DIR / "node_modules" / ".installed").is_file():
        raise NotAvailable(f"SDK {sdk_name} is not installed: run `{NODE_INSTALL_COMMAND}`")
    return SdkInstall(sdk_name, None, NODE_WORKER_DIR / "worker.mjs")


def installed_runtimes() -> list[str]:
    return [v for v in pinned_runtimes() if _available(runtime, v)]


def installed_sdks() -> list[str]:
    return [v for v in pinned_sdks() if _available(sdk, v)]


def _available(find, version: str) -> bool:
    try:
        find(version)
    except (NotAvailable, UserError):  # UserError: the default runtime is missing (the doctor's core says so)
        return False
    return True
