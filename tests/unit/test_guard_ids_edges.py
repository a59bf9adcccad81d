"""Minted ids and redacted ones, at their edges. An id minted for an app's case must be the
same id in every later version of the tool: an app that minted `for_key("acme-case-1001")`
yesterday resumes that session by minting it again today, so a changed derivation would
orphan every session it ever made; known answers pin the derivation (an HMAC subkey per
owner, then the case's MAC, then the owner's tag). A redacted id keeps its first letters
whatever their case."""

from handoff.guard.ids import Minter, redacted

KEY = b"app key " * 4


def test_the_id_for_a_case_is_the_same_in_every_version():
    assert Minter(KEY, "alice").for_key("acme-case-1001") == "hs-omhjjmhkgkggujmrhvgmvlgkijoshsgkgpnjtsll"
    assert Minter(KEY, "bob").for_key("acme-case-1001") == "hs-ovrugquoiptukjvpjvoghislvmmmnnghijloikqu"


def test_a_known_id_is_still_recognised_as_its_owners():
    assert Minter(KEY, "alice").minted_for_me("hs-omhjjmhkgkggujmrhvgmvlgkijoshsgkgpnjtsll")
    assert not Minter(KEY, "bob").minted_for_me("hs-omhjjmhkgkggujmrhvgmvlgkijoshsgkgpnjtsll")


def test_a_redacted_id_keeps_its_first_letters_in_either_case():
    assert redacted("Cust4155550123") == "Cust…(redacted: phone number)"
    assert redacted("cust4155550123") == "cust…(redacted: phone number)"


def test_a_redacted_id_shows_no_character_of_any_finding():
    """Only what comes before the first finding of any rule is shown: a secret a detector
    names twice, a long hex string before a secret a detector names, a random-looking
    run that comes twice."""
    assert redacted("abBEGIN RSA PRIVATE KEY abBEGIN RSA PRIVATE KEY") == "ab…(redacted: Private Key)"
    assert redacted("deadbeefdeadbeefdeadbeefdeadbeef.AKIAIOSFODNN7EXAMPLE") == "…(redacted: AWS Access Key)"
    assert redacted("ab.Zx9Qw8Er7Ty6Ui5Op4As3Df2.Zx9Qw8Er7Ty6Ui5Op4As3Df2") == "ab.…(redacted: high-entropy string)"


def test_text_longer_than_any_id_is_hidden_unread():
    """A 100,000-character id in a registry took the rules minutes to look through."""
    from handoff.guard.ids import MAX_LOOKED_THROUGH, redacted, secret_in

    plain = "case-" * (MAX_LOOKED_THROUGH // 5)
    assert secret_in(plain) is None and redacted(plain) == plain  # the longest looked through
    longer = "case-" * 20_000
    assert secret_in(longer).startswith("too long to look through")
    assert redacted(longer) == "…(redacted: too long to look through)"


def test_each_listed_region_s_own_example_number_is_found_as_its_people_write_it():
    """phonenumbers' example number of every region the rule lists, in that region's own
    grouping with hyphens for its spaces (as an id holds it): a phone number, each one."""
    import re

    import phonenumbers

    from handoff.guard.ids import PHONE, PHONE_REGIONS, secret_in

    for region in PHONE_REGIONS:
        national = phonenumbers.format_number(phonenumbers.example_number(region),
                                              phonenumbers.PhoneNumberFormat.NATIONAL)
        written = "case-" + re.sub(r"[^0-9]+", "-", national).strip("-")
        assert secret_in(written) == PHONE, (region, written)
