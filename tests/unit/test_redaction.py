"""A password given in any form libpq accepts is never shown or stored: the user-info
(percent-encoded or not), query parameters (their keys %-escaped too), and keyword/value
strings — in what a run stores and in every error message naming the store."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from handoff.cli import app
from handoff.stores.database import redacted

SECRET = "s3cr3t-Pw"
FORMS = [
    f"postgresql://alice:{SECRET}@db.example:5432/handoff",
    f"postgresql://alice:{SECRET.replace('-', '%2D')}@db.example/handoff",
    f"postgresql://db.example/handoff?user=alice&password={SECRET}",
    f"postgresql://db.example/handoff?sslmode=require&PassWord={SECRET}",
    f"postgresql://db.example/handoff?pass%77ord={SECRET}",
    f"postgresql://db.example/handoff?sslpassword={SECRET}",
    f"host=db.example password={SECRET} dbname=handoff",
    f"host=db.example password = '{SECRET} x' dbname=handoff",
]


@pytest.mark.parametrize("url", FORMS)
def test_every_form_of_password_is_hidden(url):
    shown = redacted(url)
    assert SECRET not in shown and SECRET.replace("-", "%2D") not in shown and "***" in shown


@pytest.mark.parametrize("url", ["postgresql://alice@db/handoff", "sqlite:///tmp/a.db", "/tmp/a.db",
                                 "postgresql://[::1]:5432/db?sslmode=require"])
def test_an_address_without_a_password_is_left_as_it_is(url):
    assert redacted(url) == url


@pytest.mark.parametrize("url", [f"postgresql://alice:{SECRET}@db.example:99999/x",
                                 f"mysql://alice:{SECRET}@db/x?password={SECRET}"])
def test_a_bad_store_s_error_never_shows_its_password(url):
    done = CliRunner().invoke(app, ["run", "cross-process-postgres", "--store", url])
    assert done.exit_code == 2 and "--store" in done.output
    assert SECRET not in done.output
