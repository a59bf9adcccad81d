"""Paths made from names: a name from a scenario file or a stored run becomes part of a
path only through :func:`inside`, which refuses a result outside its parent. The loader
already allows only plain names (scenario.NAME); this is the second wall, where the path
is made, so a name that came some other way cannot reach out either."""

from __future__ import annotations

from pathlib import Path


class Escape(ValueError):
    """A name would make a path outside the directory it belongs in."""


def inside(parent: Path, name: str) -> Path:
    """``parent / name``, resolved, and refused unless it lies within ``parent``."""
    path = (parent / name).resolve()
    if path == parent.resolve() or not path.is_relative_to(parent.resolve()):
        raise Escape(f"{name!r} would make a path outside {parent}: refused")
    return parent / name
