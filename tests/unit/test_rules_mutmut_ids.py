"""Rules of the phone and time rules of the id checks (handoff/guard/ids.py) that other
tests leave open, each where only the rule named decides (another group of digits
touching the number, ``order-12-…``, hides it from libphonenumber's matcher):

* a number on its own is read as every listed region would dial it, the next region
  tried when one cannot parse it or finds it invalid;
* it may be written with +, 00 or nothing before its country code; its + is no digit;
* every number on its own is found, not only the first;
* a bare run of ten digits is a time from its first second (1 000 000 000) up to, not
  including, 2 000 000 000: that one is a London number after +44.
"""

import pytest

from handoff.guard import ids
from handoff.guard.ids import phone_number_at


def test_a_number_the_first_region_cannot_parse_is_read_by_the_next():
    """0112845678: the US strips 011 as its international prefix and finds no country
    code 28 (parsing fails); France reads 01 12 84 56 78."""
    assert phone_number_at("order-12-0112845678") == 9


def test_a_number_invalid_in_the_first_region_is_read_by_the_next():
    """06 12 34 56 78 is no US number; it is a French mobile number."""
    assert phone_number_at("order-12-0612345678") == 9


@pytest.mark.parametrize("written", ["447400123456", "00447400123456"])
def test_a_number_with_its_country_code_and_no_plus_is_found_on_its_own(written):
    assert phone_number_at(f"order-12-{written}") == 9


def test_a_number_after_a_plus_is_found_on_its_own_where_digits_follow_it():
    """``+447400123456-12`` reads to the matcher as one number; the run alone is a GB one."""
    assert phone_number_at("ref-+447400123456-12") == 4


def test_every_number_written_on_its_own_is_found_not_only_the_first():
    assert list(ids._alone("order-12-4155550123-9-4155550123")) == [9, 22]


def test_ten_digits_from_the_first_second_of_the_time_range_are_a_time_not_a_number():
    """+20 1000000000 would be an Egyptian number; 1 000 000 000 is 2001-09-09's first second."""
    assert phone_number_at("+20 1000000000") is None


def test_ten_digits_at_the_end_of_the_time_range_are_no_time_and_may_be_a_number():
    """2 000 000 000 (2033-05-18) is past the range: +44 2000000000 is a London number."""
    assert phone_number_at("+44 2000000000") == 0
