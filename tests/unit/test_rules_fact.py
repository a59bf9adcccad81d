"""Rules of the fact's topic (handoff/fact.py) that other tests leave open: a topic is
matched as written, as the witness and the lab's answer matcher key topics:

* the lookup tool states the fact only for its topic as written: the same words in
  another case are another topic, and get "found nothing";
* a long history's filler turns keep the filler topic unless the fact's topic is that
  topic as written (a fact about "Filler Item" is not about "filler item").
"""

from handoff.fact import FILLER_TOPIC, REMEMBER_PATTERN, Fact


def test_the_lookup_tool_states_the_fact_only_for_its_topic_as_written():
    fact = Fact("At Risk", "retail segment")
    assert fact.lookup_result("retail segment") == "Found: my favourite retail segment is 'At Risk'."
    assert fact.lookup_result("Retail Segment") == "Found nothing about a favourite Retail Segment."


def test_filler_turns_keep_the_filler_topic_when_the_fact_s_topic_differs_from_it_only_in_case():
    fact = Fact("At Risk", FILLER_TOPIC.title())
    match = REMEMBER_PATTERN.search(fact.filler_prompt(7))
    assert (match["topic"], match["value"]) == (FILLER_TOPIC, "7")
    assert match["topic"] != fact.topic
