"""The container side's pure parts: the image recipe read from the Containerfile, the
mirror, podman's configuration, the owner in engine names, and the lifeline."""

from __future__ import annotations

import asyncio
import resource
import subprocess
import sys

import pytest

from handoff.containers import engine, image
from handoff.containers.lifeline import Lifeline
from handoff.worker import lifeline as worker_lifeline


def test_the_shipped_containerfile_describes_the_worker_stage():
    recipe = image.recipe()
    assert recipe.suite == "bookworm"
    assert "ca-certificates" in recipe.packages and f"python{recipe.python}" in recipe.packages
    assert 'CMD ["python3.11", "-m", "handoff.worker"]' in recipe.settings
    assert all(line.split()[0] in image.IMPORTABLE for line in recipe.settings)
    assert recipe.tag.startswith(f"{image.REPOSITORY}:") and len(recipe.tag.rsplit(":", 1)[1]) == 12


def test_the_tag_follows_the_file(tmp_path):
    original = image.CONTAINERFILE.read_text()
    copy = tmp_path / "Containerfile"
    copy.write_text(original)
    assert image.recipe(copy).tag == image.recipe().tag
    copy.write_text(original.replace("ca-certificates", "ca-certificates curl"))
    changed = image.recipe(copy)
    assert changed.tag != image.recipe().tag and "curl" in changed.packages


def test_a_containerfile_without_the_worker_stage_is_refused(tmp_path):
    broken = tmp_path / "Containerfile"
    broken.write_text("FROM scratch\n")
    with pytest.raises(image.ImageError, match="FROM ... AS worker"):
        image.recipe(broken)


def test_the_image_python_must_be_this_venv_python(tmp_path):
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    other = image.CONTAINERFILE.read_text().replace(f'python="{here}"', 'python="3.99"')
    (tmp_path / "Containerfile").write_text(other)
    assert image.python_problem(image.recipe()) is None
    assert "Python 3.99" in image.python_problem(image.recipe(tmp_path / "Containerfile"))


@pytest.mark.parametrize("text, mirror", [
    ("Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n", "http://mirror.example/debian"),
    ("deb [arch=amd64] http://ftp.example.org/debian/ bookworm main\n", "http://ftp.example.org/debian"),
    ("deb http://security.debian.org/debian-security bookworm-security main\n", image.DEFAULT_MIRROR),
])
def test_the_debian_mirror_is_the_one_apt_uses(tmp_path, text, mirror):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(text)
    assert image.debian_mirror(tmp_path) == mirror


def test_podman_gets_limits_it_can_set():
    config = engine._podman_config()
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert f'"nofile={nofile}:{nofile}"' in config
    nproc = int(config.split('"nproc=')[1].split(":")[0])
    assert nproc <= engine._pid_max()


def test_a_worker_holding_the_lifeline_ends_when_the_run_lets_go():
    """The worker's side in a real process; the run's side closes as a dying run would."""
    async def scenario() -> tuple[int | None, int]:
        line = Lifeline()
        address = await line.start("127.0.0.1")
        worker = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from handoff.worker import lifeline; import time; lifeline.hold(); "
                                  "print('holding', flush=True); time.sleep(60)",
            env={"HANDOFF_LIFELINE": address, "PATH": "/usr/bin:/bin"}, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        assert (await worker.stdout.readline()).strip() == b"holding"
        await asyncio.sleep(0.2)
        still = worker.returncode
        line.close()
        return still, await asyncio.wait_for(worker.wait(), 10)

    still_running, code = asyncio.run(scenario())
    assert still_running is None and code == worker_lifeline.LOST


def test_a_worker_whose_run_is_gone_does_not_start():
    """Nothing listens at the address (the run died before the container started): after
    its grace period for a slow start (shortened here), the worker exits, never reading a spec."""
    code = "from handoff.worker import lifeline; lifeline.CONNECT_SECONDS = 0.3; lifeline.hold('127.0.0.1:9'); print('on')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == worker_lifeline.LOST and "it has ended" in done.stderr and done.stdout == ""
