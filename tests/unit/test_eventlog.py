"""Reading a session's event log for evidence."""

import json

from handoff.eventlog import EventLogSummary, Resume, events_path, parse_events, read_events, report, summarize, summarize_file


def event(kind, id_, parent=None, **data):
    return {"id": id_, "parentId": parent, "type": kind, "data": data}


def chain(*kinds):
    """Events of these types, each the child of the one before."""
    return [event(kind, str(i), str(i - 1) if i else None) for i, kind in enumerate(kinds)]


def test_resume_after_shutdown_was_closed_before():
    events = chain("session.start", "user.message", "session.shutdown")
    events.append(event("session.resume", "r", "2", eventCount=3, alreadyInUse=False))
    summary = summarize(events)
    assert summary.resumes == (Resume(event_count=3, already_in_use=False, closed_before=True, events_before=3,
                                      messages_before=1),)
    assert summary.last_resume.closed_before is True
    assert summary.unreadable_lines == 0  # none were given


def test_resume_without_shutdown_was_not_closed_before():
    summary = summarize(chain("session.start", "user.message", "session.resume"))
    assert summary.last_resume.closed_before is False


def test_a_shutdown_before_a_new_start_does_not_count():
    summary = summarize(chain("session.start", "session.shutdown", "session.start", "session.resume"))
    assert summary.last_resume.closed_before is False


def test_each_resume_needs_its_own_shutdown():
    summary = summarize(chain("session.start", "session.shutdown", "session.resume", "session.resume"))
    assert [r.closed_before for r in summary.resumes] == [True, False]


def test_resume_reads_event_count_and_already_in_use():
    summary = summarize([event("session.resume", "r", eventCount=12, alreadyInUse=True)])
    assert (summary.last_resume.event_count, summary.last_resume.already_in_use) == (12, True)


def test_resume_without_data_reads_none():
    summary = summarize([{"id": "r", "type": "session.resume"}])
    assert summary.last_resume == Resume(None, None, False, 0)


def test_counts_events_and_starts():
    events = chain("session.start", "user.message") + [event("session.start", "s2")]
    summary = summarize(events)
    assert (summary.events, summary.starts, summary.resumes, summary.last_resume) == (3, 2, (), None)


def test_branch_points_count_parents_with_two_children():
    events = chain("session.start", "user.message", "assistant.message")
    events += [event("user.message", "fork", "1"), event("user.message", "x", "fork")]
    assert summarize(events).branch_points == 1
    assert summarize(chain("session.start", "user.message", "assistant.message")).branch_points == 0


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_read_events_counts_torn_lines_and_skips_blank_ones(tmp_path):
    good = [event("session.start", "0"), event("user.message", "1", "0")]
    path = write_lines(tmp_path / "events.jsonl", [json.dumps(good[0]), "", json.dumps(good[1]), '{"id": "2", "ty'])
    assert read_events(path) == (good, 1)


def test_summarize_file(tmp_path):
    lines = [json.dumps(e) for e in chain("session.start", "session.shutdown", "session.resume")] + ["torn{"]
    summary = summarize_file(write_lines(tmp_path / "events.jsonl", lines))
    assert summary == EventLogSummary(events=3, starts=1, resumes=(Resume(None, None, True, 2),), unreadable_lines=1)


def test_summarize_file_is_none_without_a_log(tmp_path):
    assert summarize_file(tmp_path / "missing" / "events.jsonl") is None
    assert summarize_file(tmp_path) is None  # a directory is not a log


def test_events_path(tmp_path):
    assert events_path(tmp_path, "abc") == tmp_path / "session-state" / "abc" / "events.jsonl"


def test_the_creating_runtime_is_the_first_start_s_copilot_version():
    events = [event("session.start", "0", copilotVersion="1.0.92"), event("session.resume", "1", "0"),
              event("session.start", "2", copilotVersion="1.0.102")]
    assert summarize(events).created_by == "1.0.92"
    assert summarize(chain("session.resume")).created_by is None


def test_events_before_resume_is_what_there_was_to_load():
    """A resume that loads fewer events than the log held skipped some (an older runtime
    skips event types it does not know)."""
    events = chain("session.start", "user.message", "session.usage_record", "session.shutdown")
    events.append(event("session.resume", "r", "3", eventCount=3))
    log = report("s", "\n".join(json.dumps(e) for e in events).encode())
    assert (log.events_before_resume, log.resume_event_count) == (4, 3)


def test_the_last_reply_follows_the_last_prompt():
    """A turn the runtime answered into the log, whether or not the app got the answer."""
    events = [event("user.message", "0", content="tell"), event("assistant.message", "1", "0", content="OK"),
              event("user.message", "2", "1", content="ask"), event("assistant.turn_start", "3", "2"),
              event("assistant.message", "4", "3", content=""), event("assistant.message", "5", "4", content="It is X.")]
    summary = summarize(events)
    assert (summary.last_prompt, summary.last_reply) == ("ask", "It is X.")
    unanswered = summarize(events[:3])
    assert (unanswered.last_prompt, unanswered.last_reply) == ("ask", None)


def stamped(kind, id_, at, **data):
    return {**event(kind, id_, **data), "timestamp": at}


def test_when_the_last_answer_was_written_after_its_prompt_by_the_log_s_own_clock():
    events = [stamped("user.message", "1", "2026-12-05T01:10:39.332Z", content="q"),
              stamped("assistant.message", "2", "2026-12-05T01:10:40.632Z", content="a")]
    assert summarize(events).last_reply_ms == 1300
    assert report("s", b"\n".join(json.dumps(e).encode() for e in events)).last_reply_ms == 1300


def test_no_answer_or_no_readable_time_gives_no_reply_time():
    asked_only = [stamped("user.message", "1", "2026-12-05T01:10:39.332Z", content="q")]
    assert summarize(asked_only).last_reply_ms is None
    garbled = [stamped("user.message", "1", "yesterday", content="q"),
               stamped("assistant.message", "2", 12, content="a")]
    assert summarize(garbled).last_reply_ms is None and summarize(garbled).last_reply == "a"


def test_a_line_nested_deeper_than_the_parser_goes_is_one_unreadable_line():
    deep = b"[" * 100_000 + b"]" * 100_000
    assert parse_events(deep + b'\n{"type": "session.start"}\n') == ([{"type": "session.start"}], 1)


def timed(kind, at, **data):
    return {"type": kind, "timestamp": at, "data": data}


def test_event_types_are_the_runtimes_own_words_exactly():
    """A log whose types are written in another case is not one the runtime wrote: none of
    them counts as a start, a close, a resume, a prompt or an answer."""
    events = [timed("Session.Start", "2026-03-01T10:00:00Z", copilotVersion="1.0.102"),
              timed("User.Message", "2026-03-01T10:00:01Z", content="q"),
              timed("Assistant.Message", "2026-03-01T10:00:02Z", content="a"),
              timed("SESSION.SHUTDOWN", "2026-03-01T10:00:03Z"), timed("Session.Resume", "2026-03-01T10:00:04Z")]
    summary = summarize(events)
    assert (summary.starts, summary.resumes, summary.created_by) == (0, (), None)
    assert (summary.last_prompt, summary.last_reply) == (None, None)
    opened = [timed("session.start", "2026-03-01T10:00:00Z"), timed("Session.Shutdown", "2026-03-01T10:00:01Z"),
              timed("session.resume", "2026-03-01T10:00:02Z", eventCount=2)]
    assert summarize(opened).last_resume.closed_before is False  # no session.shutdown was written
    closed = [timed("session.start", "2026-03-01T10:00:00Z"), timed("session.shutdown", "2026-03-01T10:00:01Z"),
              timed("Session.Start", "2026-03-01T10:00:02Z"), timed("session.resume", "2026-03-01T10:00:03Z")]
    assert summarize(closed).last_resume.closed_before is True  # and no new start opened it again


def test_only_an_assistant_message_answers_and_its_time_is_counted_from_the_prompt_in_any_zone():
    prompt = timed("user.message", "2026-03-01T10:00:00+02:00", content="q")  # 08:00:00 UTC
    answered = summarize([prompt, timed("tool.execution_complete", "2026-03-01T08:00:01Z", content="from a tool"),
                          timed("assistant.message", "2026-03-01T08:00:05Z", content="a")])
    assert (answered.last_reply, answered.last_reply_ms) == ("a", 5000)
    assert summarize([prompt, timed("tool.execution_complete", "2026-03-01T08:00:01Z", content="x")]).last_reply is None
    untimed = summarize([prompt, {"type": "assistant.message", "data": {"content": "a"}}])
    assert (untimed.last_reply, untimed.last_reply_ms) == ("a", None)  # no time to count from
