"""Rules of the id checks (handoff/guard/ids.py) that other tests leave open:

* every region PHONE_REGIONS lists is needed: each of GB, FR, IN, JP, AU and NL has a
  number, written as its own country writes it, that no other listed region reads;
* a run of digits that another group of digits touches (``order-12-4155550123``, which
  libphonenumber's matcher reads as one number) is still read as a number on its own;
* a date written inside an id (``user-42-20261206``: a counter, then the day) is no
  phone number, though a phone rule would read the two groups as one;
* of the rules about an id's form, the length is reported before whitespace.
"""

import pytest

from handoff.guard import ids
from handoff.guard.ids import MAX_LENGTH, PHONE, phone_number_at, secret_in, secret_shape

# Numbers in each country's own national form, grouped as it groups them (libphonenumber's
# example numbers; for GB its VoIP range, as its other ranges' national forms are read by
# IN, IT, DE or others too): only that region of PHONE_REGIONS reads them.
NATIONAL_ONLY_ITS_OWN = {"GB": "056-1234-5678", "FR": "06.12.34.56.78", "IN": "081234-56789",
                         "JP": "0120-123-456", "AU": "1800-123-456", "NL": "06-12345678"}
# The international form without its + or 00 (country code, then the national number):
# only the region whose country code it starts with strips it. (France's is not here:
# 33 followed by a French number is also an Italian mobile number.)
INTERNATIONAL_ONLY_ITS_OWN = {"GB": "447400123456", "IN": "918123456789", "JP": "81312345678",
                              "AU": "61412345678", "NL": "31612345678"}


def _without(region: str) -> tuple[str, ...]:
    return tuple(listed for listed in ids.PHONE_REGIONS if listed != region)


@pytest.mark.parametrize(("region", "written"), [*NATIONAL_ONLY_ITS_OWN.items(), *INTERNATIONAL_ONLY_ITS_OWN.items()])
def test_a_number_only_its_own_listed_region_reads_is_found_because_that_region_is_listed(region, written, monkeypatch):
    assert region in ids.PHONE_REGIONS
    assert phone_number_at(f"ref-{written}") == 4
    assert secret_in(f"ref-{written}") == PHONE
    monkeypatch.setattr(ids, "PHONE_REGIONS", _without(region))
    assert phone_number_at(f"ref-{written}") is None  # no other listed region reads it


def test_a_number_another_group_of_digits_touches_is_still_found_on_its_own():
    # The matcher reads 12-4155550123 as one (invalid) number; the run 4155550123 on its
    # own is a valid US number, as US people write it.
    assert phone_number_at("order-12-4155550123") == len("order-12-")
    assert secret_in("order-12-4155550123") == PHONE


@pytest.mark.parametrize("session_id", ["user-42-20261206", "user-12-20190315"])
def test_a_counter_and_a_date_in_an_id_are_not_read_together_as_a_phone_number(session_id):
    # {userId}-{taskId}-{timestamp} with the day as its timestamp: Brazil's rule would
    # read "42-20261206" as a number of area 42; the date is blanked before any rule looks.
    assert phone_number_at(session_id) is None
    assert secret_shape(session_id) is None


def test_an_id_too_long_is_refused_for_its_length_before_its_whitespace():
    too_long_with_a_space = "case " + "x" * MAX_LENGTH
    assert secret_shape(too_long_with_a_space) == f"is longer than {MAX_LENGTH} characters"
    assert secret_shape("case " + "x" * (MAX_LENGTH - 5)) == "contains whitespace or a control character"
