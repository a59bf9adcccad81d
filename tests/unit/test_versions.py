"""Which runtime and SDK versions a checkout can run: pins, installs, order, and what to do."""

import pytest

from handoff import versions


def test_version_numbers_are_three_numbers_and_order_as_numbers():
    assert versions.well_formed("1.0.92") and not versions.well_formed("1.0") and not versions.well_formed("1.0.x")
    assert not versions.well_formed("1.0.92 ")
    assert sorted(["1.0.102", "1.0.40", "1.0.92"], key=versions.key) == ["1.0.40", "1.0.92", "1.0.102"]
    assert versions.older("1.0.92", "1.0.102") and not versions.older("1.0.102", "1.0.102")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project layout: runtimes/, sdks/, .state/sdks/, .state/runtime-cache/."""
    for name, folder in (("RUNTIMES_DIR", "runtimes"), ("SDKS_DIR", "sdks"), ("SDK_VENVS", "venvs"),
                         ("RUNTIME_CACHES", "caches")):
        monkeypatch.setattr(versions, name, tmp_path / folder)
    return tmp_path


def pin_runtime(project, version, installed=False):
    folder = project / "runtimes" / version
    folder.mkdir(parents=True)
    (folder / "package.json").write_text("{}")
    (folder / "package-lock.json").write_text("{}")
    if installed:
        executable = folder / "node_modules" / "@github" / versions.platform_package() / "copilot"
        executable.parent.mkdir(parents=True)
        executable.write_text("")


def pin_sdk(project, version, installed=False):
    (project / "sdks" / version).mkdir(parents=True)
    (project / "sdks" / version / "requirements.txt").write_text(f"github-copilot-sdk=={version}\n")
    if installed:
        (project / "venvs" / version / "bin").mkdir(parents=True)
        (project / "venvs" / version / "bin" / "python").write_text("")
        (project / "venvs" / version / ".installed").write_text("")


def test_pinned_versions_include_the_default_pair(project):
    pin_runtime(project, "1.0.92")
    pin_sdk(project, "1.0.24")
    (project / "runtimes" / "notes").mkdir()  # not a version: ignored
    assert versions.pinned_runtimes() == ["1.0.92", versions.DEFAULT_RUNTIME]
    assert versions.pinned_sdks() == ["1.0.24", versions.DEFAULT_SDK]


def test_a_pinned_version_not_installed_names_the_install_command(project):
    pin_runtime(project, "1.0.92")
    pin_sdk(project, "1.0.24")
    with pytest.raises(versions.NotAvailable, match=r"runtime 1.0.92 is not installed: run `make runtimes`"):
        versions.runtime("1.0.92")
    with pytest.raises(versions.NotAvailable, match=r"SDK 1.0.24 is not installed: run `make runtimes`"):
        versions.sdk("1.0.24")
    assert versions.installed_sdks() == [versions.DEFAULT_SDK]


def test_a_version_not_pinned_says_how_to_pin_it(project):
    with pytest.raises(versions.NotAvailable, match=r"runtime 1.0.88 is not pinned .* make runtimes/1.0.88/"):
        versions.runtime("1.0.88")
    with pytest.raises(versions.NotAvailable, match=r"SDK 1.0.20 is not pinned .* make sdks/1.0.20/requirements.txt"):
        versions.sdk("1.0.20")


def test_installed_versions_each_have_their_own_place(project):
    pin_runtime(project, "1.0.92", installed=True)
    pin_sdk(project, "1.0.24", installed=True)
    found = versions.runtime("1.0.92")
    assert found.cache == project / "caches" / "1.0.92"  # its own unpack cache
    assert found.executable.is_file()
    assert versions.sdk("1.0.24").python == project / "venvs" / "1.0.24" / "bin" / "python"
    assert versions.sdk(versions.DEFAULT_SDK).python is None  # the default SDK is this interpreter's
    assert versions.runtime(versions.DEFAULT_RUNTIME).cache is None  # and the default runtime uses its host's cache
