"""The id rules against their two corpora (tests/id_corpus.py): nothing apps and the SDK
use as ids is refused or hidden, everything that carries a secret or personal data is
both, and the table in docs/stores-and-security.md is the one the rules make today."""

from __future__ import annotations

import pytest

from tests.id_corpus import documented, groups, judge, table


@pytest.fixture(scope="module")
def judged():
    return [judge(group) for group in groups()]


def test_no_id_that_apps_and_the_sdk_use_is_refused_or_hidden(judged):
    for one in (j for j in judged if j.group.must_pass):
        assert (one.refused, one.hidden) == (0, 0), f"{one.group.name}: refused or hidden, e.g. {one.wrong}"


def test_every_id_carrying_a_secret_or_personal_data_is_refused_and_hidden(judged):
    for one in (j for j in judged if not j.group.must_pass):
        assert one.refused == one.hidden == len(one.group.ids), f"{one.group.name}: missed, e.g. {one.wrong}"


def test_the_docs_show_the_table_the_rules_make(judged):
    assert documented() == table(judged), \
        "the id rules changed: run `.venv/bin/python -m tests.id_corpus` and commit docs/stores-and-security.md"


def test_the_corpora_are_the_same_on_every_run():
    first, second = groups(), groups()
    seeded = [i for i, g in enumerate(first) if "minted" not in g.name]  # minting draws its own randomness
    assert [first[i].ids for i in seeded] == [second[i].ids for i in seeded]
    assert len(first[0].ids) == 100_000 and len(set(first[0].ids)) == 100_000
