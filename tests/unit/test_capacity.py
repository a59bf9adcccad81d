"""--jobs is bounded by memory: the pure arithmetic of handoff/capacity.py."""

from __future__ import annotations

from handoff import capacity, scenario_files

GIB = 2**30


def _named(*names: str):
    return [s for s in scenario_files.select([]) if s.name in names]


def test_a_scenario_that_resumes_concurrently_needs_two_runtimes_at_once():
    concurrent, plain = _named("concurrent-resume")[0], _named("cross-process")[0]
    assert capacity.runtimes_at_once(concurrent) == 2
    assert capacity.runtimes_at_once(plain) == 1
    assert capacity.bytes_per_job([plain, concurrent]) == 2 * capacity.RUNTIME_PEAK_BYTES


def test_a_scenario_that_sits_out_a_turn_time_out_counts_its_idle_runtime_beside_the_slot_it_lends():
    [old] = _named("resume-on-old-runtime")
    assert capacity.runtimes_at_once(old) == 2


def test_jobs_are_lowered_to_what_memory_holds_but_never_below_one():
    per_job = capacity.bytes_per_job(_named("cross-process"))
    assert capacity.jobs_that_fit(8, per_job, 64 * GIB) == 8  # plenty: as asked
    assert capacity.jobs_that_fit(8, per_job, 3 * per_job + 1) == 3
    assert capacity.jobs_that_fit(8, per_job, per_job // 2) == 1  # too little even for one: still one


def test_the_note_names_both_numbers_and_why():
    note = capacity.lowered_note(8, 3, 700 * capacity.MIB, int(2.5 * GIB))
    assert note.startswith("note: --jobs 8 lowered to 3:") and "2.5 GiB" in note and "700 MiB" in note
