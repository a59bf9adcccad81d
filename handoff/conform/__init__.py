"""Prove it on your own store: a conformance suite for any SessionFs provider.

``suite.validate(factory)`` judges the provider an app passes to the SDK as
``create_session_fs_handler`` (called with the session, returning a
``copilot.session_fs_provider.SessionFsProvider``) and returns a :class:`Report`, a row
per property with its outcome — ok, fail, or unknown when the check itself could not
finish — and a line saying why. ``handoff conform MODULE:FACTORY`` prints it.

It runs the contract rows (contract.py), op by op on the provider alone, through the
SDK's own adapter: what the runtime's requests reach; then persistence through the
provider with the real runtime (persistence.py): a resume in the same process and in a
new one, after a compaction and after a kill mid-turn, the session's files in a new
process, two resumers at once, and discovery from another home. Two resumers under the
guard's lease and the cost are not run yet; the report says so rather than passing them.

For a team's own tests: ``from handoff.conform.testing import assert_conforms, validate``
(this face imports nothing, as every package's here: a process that needs one module of
it loads that one).
"""
