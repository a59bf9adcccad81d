"""The fact, its quoting, and the prompts that carry it."""

import pytest

from handoff import inputs
from handoff.fact import REMEMBER_PATTERN, Fact, quote, unquote

AWKWARD_VALUES = [
    "At Risk",
    "O'Brien",
    "back\\slash",
    "ends with a backslash\\",
    "\\'",
    'say "hi"',
    "Ünïcödé ✓ 日本語",
    "  spaces  around  ",
    "it's 'quoted' \\ twice\\\\",
]


@pytest.mark.parametrize("value", AWKWARD_VALUES)
def test_unquote_undoes_quote(value):
    assert unquote(quote(value)) == value


def test_quote_escapes_single_quotes_and_backslashes_only():
    assert quote("O'Brien") == "O\\'Brien"
    assert quote("a\\b") == "a\\\\b"
    assert quote('say "hi" ✓') == 'say "hi" ✓'


@pytest.mark.parametrize("value", AWKWARD_VALUES)
def test_remember_prompt_carries_the_value_and_topic(value):
    fact = Fact(value, "customer tier")
    match = REMEMBER_PATTERN.fullmatch(fact.remember_prompt)
    assert match is not None
    assert match.group("topic") == "customer tier"
    assert unquote(match.group("value")) == value


def test_stated_text_is_part_of_the_remember_prompt():
    fact = Fact("O'Brien", "surname")
    assert fact.stated_text in fact.remember_prompt


def test_is_in_ignores_case():
    assert Fact("At Risk").is_in("Your favourite is AT RISK.")
    assert Fact("Straße").is_in("you said STRASSE")


def test_is_in_accepts_the_quoted_form():
    assert Fact("O'Brien").is_in("Your favourite surname is 'O\\'Brien'.")


@pytest.mark.parametrize("answer", [None, "", "Champions", "At", "Risk at"])
def test_is_in_is_false_without_the_value(answer):
    assert not Fact("At Risk").is_in(answer)


def test_is_in_does_not_match_inside_another_word():
    assert not Fact("Art").is_in("We started over.")


def test_unquote_undoes_an_escaped_line_break_too():
    assert unquote("a\\\nb") == "a\nb"


def test_the_default_fact_is_written_down_only_where_it_is_defined():
    """The tests run the ladder with another fact (tests/e2e/conftest.py): that proves the
    default too only while no code, scenario or tool knows the default's words."""
    from pathlib import Path

    from handoff import fact

    root = Path(fact.__file__).resolve().parent.parent
    words = (fact.DEFAULT_VALUE, fact.DEFAULT_TOPIC)
    places = [p for folder in ("handoff", "scenarios", "bench", "tools", "runtime", "sdks")
              for p in (root / folder).rglob("*") if p.is_file() and "node_modules" not in p.parts
              and p.suffix in (".py", ".toml", ".j2", ".json", ".txt", ".sh", "")]
    knowing = sorted(str(p.relative_to(root)) for p in places
                     if any(w in p.read_text(encoding="utf-8", errors="replace") for w in words))
    assert knowing == ["handoff/fact.py"]


@pytest.mark.parametrize("value", ["\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F",
                                   "co\u00adop", "\u05e9\u05dc\u05d5\u05dd\u200f", "a\u200db"])
def test_formatting_characters_that_write_a_value_are_not_hidden_ones(value):
    """A flag emoji's tag characters, a soft hyphen, a right-to-left mark, a joiner."""
    assert inputs.fact(value, "topic").value == value
