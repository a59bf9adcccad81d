"""The pictures of the HTML report in docs/runs.md (docs/report.png, docs/report-diagram.png),
made from a stored run's page in Debian's chromium, driven by Playwright, at 1280 px wide:

    .venv/bin/python tools/report_screenshots.py [RUN] [--runs-dir DIR] [--out docs]

RUN is a stored run's id (or a unique prefix of it); by default the latest `handoff run`
in DIR (.state/runs). docs/report.png is the page's first 1400 px: the plan, the versions,
what the run proved and the ladder's first groups; docs/report-diagram.png is the
crash-after-turn scenario's diagram (or --diagram NAME's)."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from handoff.checker.checks import judge  # noqa: E402
from handoff.report.formats import rendered
from handoff.runs import store  # noqa: E402

WIDTH, HEIGHT = 1280, 800
TOP = 1400  # px of the page's top in docs/report.png
# Off the closed network, chromium's own background connections fail and log errors.
QUIET = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", nargs="?", help="a stored run's id (default: the latest `handoff run`)")
    parser.add_argument("--runs-dir", type=Path, default=store.RUNS_DIR)
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--diagram", default="crash-after-turn", help="the scenario whose diagram to show")
    options = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium here (tools/ensure-system-packages installs Debian's, as root)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    found = store.load(options.run, options.runs_dir, command=None if options.run else "run")
    record = found.record
    with tempfile.TemporaryDirectory() as folder:
        page_file = Path(folder) / "report.html"
        page_file.write_text(rendered(record, judge(record), "html"), encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=QUIET)
            try:
                page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
                page.goto(page_file.as_uri())
                options.out.mkdir(parents=True, exist_ok=True)
                summary = options.out / "report.png"
                page.screenshot(path=str(summary), clip={"x": 0, "y": 0, "width": WIDTH, "height": TOP},
                                full_page=True)
                diagram = page.locator(f"svg.sequence[data-scenario='{options.diagram}']")
                if diagram.count() == 0:
                    print(f"run {record.id} has no diagram of {options.diagram}", file=sys.stderr)
                    return 2
                drawn = options.out / "report-diagram.png"
                diagram.screenshot(path=str(drawn))
            finally:
                browser.close()
    print(f"from run {record.id} ({found.path}): {summary}, {drawn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
