"""The app transaction every commit that rewrites a table's files carries, so two rewrites never both land.

A Delta commit that removes files must fail when a concurrent commit removed
any of the same files; otherwise both commits' new files hold the same rows.
``deltalake`` checks that for the MERGE and OPTIMIZE it runs, except when the
concurrent commit is itself a compaction (its removes say ``dataChange:
false``), and not at all for a commit of hand-made actions. It does always
refuse a commit when a concurrent one carried a ``txn`` action of the same
application id. So the project's rewriting commits — compaction
(:mod:`.optimize`) and the table view's MERGE (:mod:`.view_table`) — each
carry the app transaction ``(REWRITE_APP_ID, read version + 1)``: of two
such commits made from the same version, the second fails with
``CommitFailedError``, and its writer plans again from the new version.
Appends (the ingest sink) carry no guard and never conflict with a rewrite.
"""

from __future__ import annotations

REWRITE_APP_ID = "spate-delta-rewrite"


def guard_transaction(read_version: int):
    """The guard for a rewrite planned from table version ``read_version``."""
    from deltalake.transaction import Transaction

    return Transaction(REWRITE_APP_ID, read_version + 1)
