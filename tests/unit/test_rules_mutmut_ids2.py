"""Rules of the id checks (handoff/guard/ids.py) that other tests leave open:

* a letter touching a digit, upper or lower case, before or after the number, becomes
  one space before libphonenumber's matcher looks: a grouped number inside a word is
  found, where it starts in the text as written;
* the long-number rule looks past UUIDs: a UUID's digit groups inside an id are no card
  or account number;
* the long base64 rule is reported once, after the phone rule, never before it.
"""

import pytest

from handoff.guard.ids import _findings, phone_number_at


@pytest.mark.parametrize(("text", "start"), [
    ("a415-555-0123", 1), ("ab415-555-0123", 2), ("ID415-555-0123", 2), ("id415-555-0123", 2),
    ("x415-555-0123y", 1), ("X415-555-0123Y", 1),
])
def test_a_grouped_number_touching_letters_of_either_case_is_found_where_it_starts_as_written(text, start):
    assert phone_number_at(text) == start


def test_a_number_with_a_letter_touching_its_end_is_found_at_its_start():
    assert phone_number_at("415-555-0123x") == 0
    assert phone_number_at("415-555-0123XY") == 0


def test_the_digit_groups_of_a_uuid_inside_an_id_are_no_long_number():
    assert list(_findings("id-12345678-1234-1234-1234-123456789012")) == []


def test_a_long_base64_string_is_reported_once_after_the_phone_rule():
    text = "415-555-0123-xYz9xYz9xYz9xYz9xYz9xYz9xYz9xYz9"
    assert list(_findings(text)) == [
        ("contains a phone number", 0),
        ("contains a long base64 string (a secret?)", 0),  # its run takes in the digits and dashes
    ]
