"""The workload checker on synthetic histories: a clean run passes, each broken promise is counted and shown."""

from __future__ import annotations

from tests.support.faults.history import Moved, OutOfOrder, WorkloadHistory, check_history, parse_value, value_of


def history(acked: dict[str, int], failed: dict[str, str] | None = None, unresolved: set[str] | None = None):
    return WorkloadHistory(topic="t", partitions=2, acked=acked, failed=failed or {}, unresolved=unresolved or set(),
                           sent=len(acked) + len(failed or {}) + len(unresolved or ()))


def clean_run(count: int = 6) -> tuple[WorkloadHistory, dict[int, list[tuple[int, str]]]]:
    """``count`` values per partition, each acknowledged at the offset it is read at."""
    read = {p: [(seq, value_of(p, seq)) for seq in range(count)] for p in (0, 1)}
    return history({value: offset for p in read for offset, value in read[p]}), read


def test_values_have_the_partition_and_sequence_form() -> None:
    assert parse_value(value_of(3, 41)) == (3, 41)
    assert parse_value("nonsense") is None and parse_value("1:x") is None


def test_a_run_where_everything_acknowledged_is_read_once_in_order_passes() -> None:
    report = check_history(*clean_run())
    assert report.ok
    assert (report.acknowledged, report.read) == (12, 12)
    assert report.summary().startswith("12 acknowledged, 0 failed, 0 unresolved, 12 read; 0 lost")


def test_an_acknowledged_value_never_read_is_lost() -> None:
    acked, read = clean_run()
    read[1] = [entry for entry in read[1] if entry[1] != "1:4"]
    report = check_history(acked, read)
    assert report.lost == ("1:4",) and not report.ok
    assert "1 lost" in report.summary() and "lost: 1:4" in report.summary()


def test_failed_or_unresolved_values_may_or_may_not_have_been_written() -> None:
    read = {0: [(0, "0:0"), (1, "0:1")], 1: []}
    report = check_history(history({"0:0": 0}, failed={"0:1": "REQUEST_TIMED_OUT"}, unresolved={"0:2"}), read)
    assert report.ok and (report.failed, report.unresolved) == (1, 1)


def test_a_value_read_twice_is_a_duplicate() -> None:
    acked, read = clean_run()
    read[0].append((6, "0:3"))
    report = check_history(acked, read)
    assert report.duplicates == ("0:3",)
    assert not report.out_of_order  # a repeat is a duplicate, not a reordering


def test_a_lower_sequence_after_a_higher_one_is_out_of_order() -> None:
    acked, read = clean_run(4)
    read[1] = [(0, "1:0"), (1, "1:2"), (2, "1:1"), (3, "1:3")]
    acked.acked.update({"1:2": 1, "1:1": 2})
    report = check_history(acked, read)
    assert report.out_of_order == (OutOfOrder(partition=1, offset=2, seq=1, after_seq=2),)
    assert not report.lost and not report.moved


def test_a_value_read_at_another_offset_than_acknowledged_moved() -> None:
    acked, read = clean_run(3)
    acked.acked["0:2"] = 7
    report = check_history(acked, read)
    assert report.moved == (Moved("0:2", 7, (2,)),)


def test_values_never_sent_or_in_the_wrong_partition_are_unexpected() -> None:
    acked, read = clean_run(2)
    read[0] += [(2, "0:9"), (3, "garbage")]
    read[1] += [(2, "0:1")]  # partition 0's value found in partition 1
    report = check_history(acked, read)
    assert report.unexpected == ("0:9", "garbage", "0:1")


def test_the_summary_shows_a_few_examples_and_counts_the_rest() -> None:
    acked, read = clean_run(10)
    read[0] = []
    summary = check_history(acked, read).summary()
    assert "10 lost" in summary
    assert "lost: 0:0, 0:1, 0:2, 0:3, 0:4 and 5 more" in summary
