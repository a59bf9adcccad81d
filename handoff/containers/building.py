"""`handoff image build` (and `make containers`): the worker image made outside a run,
with the same cleanup guarantees as a run (a Ctrl-C or a kill leaves no debootstrap
running and no half-made root file system that `handoff clean` would not find)."""

from __future__ import annotations

import asyncio
from typing import Callable

from handoff import owners
from handoff.containers import image
from handoff.containers.engine import Engine, EngineError
from handoff.errors import UserError
from handoff.processes import ProcessTracker, StopOnce


class BuildFailed(Exception):
    """The image could not be made (exit code 3); the message says which step and why."""


def build(engine_name: str, progress: Callable[[str], None]) -> str:
    """Make sure ``engine`` has the worker image; returns its tag."""
    engine = Engine(engine_name)
    problem = engine.problem()
    if problem:
        raise UserError(problem)
    try:
        recipe = image.recipe()
    except image.ImageError as error:
        raise UserError(str(error)) from None
    problem = image.python_problem(recipe)
    if problem:
        raise UserError(problem)
    if image.present(engine, recipe):
        progress(f"{recipe.tag} is already built")
        return recipe.tag
    owners.claim()
    tracker = ProcessTracker()

    async def ensure() -> None:
        try:
            await image.ensure(engine, tracker, progress, recipe)
        finally:
            await tracker.shutdown()

    with StopOnce() as stop:
        try:
            asyncio.run(ensure())
        except (image.ImageError, EngineError) as error:
            raise BuildFailed(str(error)) from None
        finally:
            with stop.shielded():
                tracker.stop_all()
    return recipe.tag
