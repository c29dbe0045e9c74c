"""The performance report's Targets table, from synthetic figures: no broker, no Spark.

``report_targets.evaluate`` turns the figures the benchmarks return into a
row per target and case; these tests feed it made-up figures at full and at
``--quick`` sizes, with benchmarks met, missed, left out by ``--only`` and
failed.
"""

from __future__ import annotations

import pytest

from tests.perf import (
    compare_brokers,
    report,
    report_targets,
    scale,
    spark_read_bench,
    spark_sink_bench,
    spark_stream_bench,
)
from tests.perf.connection_scale_bench import Row as ConnectionRow
from tests.perf.group_scale_bench import GroupScale
from tests.perf.log_growth_bench import Step
from tests.perf.partition_scale_bench import ProduceRun
from tests.perf.partition_scale_bench import Row as PartitionRow
from tests.perf.report_targets import (
    KB_1,
    READ_CEILING,
    READ_PARQUET,
    SINK,
    Results,
    StreamFigures,
    TargetRow,
    evaluate,
    table,
)
from tests.perf.spark_read_bench import SizeResult
from tests.perf.spark_sink_bench import SinkRun
from tests.perf.spark_stream_bench import LatencyResult


def produce_run(mb_per_s: float, partitions: int) -> ProduceRun:
    # records * 1024 B / seconds / 1e6 = MB/s
    return ProduceRun(records=round(mb_per_s * 1e6 / 1024), seconds=1.0, partitions_written=partitions,
                      client_cpu_s=1.0, broker_cpu_s=1.0)


def partition_row(partitions: int, round_robin: float, in_runs: float, restart_s: float) -> PartitionRow:
    return PartitionRow(partitions, produce_run(round_robin, partitions), produce_run(in_runs, partitions),
                        fds=10, rss_mb=60, create_s=1.0, metadata_ms=1.0, recovery_s=2.0, stop_s=1.0,
                        restart_s=restart_s)


def connection_row(connections: int, p99_ms: float, errors: int = 0) -> ConnectionRow:
    return ConnectionRow(connections, 10.0, 1000, errors, 2.0, p99_ms, p99_ms, 1.0, 1.0)


def scale_results(sizes: scale.Sizes, *, worst_partition_ratio: float = 0.6, restart_s: float = 4.0,
                  p99_ms: float = 20.0, errors: int = 0, rebalance_s: float = 2.0,
                  committed: float = 1.0) -> scale.ScaleResults:
    counts = sizes.partitions
    partitions = [partition_row(count, 100.0, 100.0, 1.0) for count in counts[:-1]]
    partitions.append(partition_row(counts[-1], 100.0 * worst_partition_ratio, 80.0, restart_s))
    connections = [connection_row(count, 5.0) for count in sizes.connections[:-1]]
    connections.append(connection_row(sizes.connections[-1], p99_ms, errors))
    steps = [Step(sizes.log_step_gb, 500.0, 1.0, 2.0, 0.5), Step(sizes.log_gb, 450.0, 1.2, 2.5, 0.5)]
    groups = GroupScale(sizes.members, sizes.groups,
                        {"classic": {"seconds": rebalance_s, "broker_cpu_s": 1.0, "client_cpu_s": 1.0},
                         "consumer (KIP-848)": {"seconds": 1.0, "broker_cpu_s": 1.0, "client_cpu_s": 1.0}},
                        {"asked_per_s": sizes.groups, "achieved_per_s": sizes.groups * committed, "failures": 0,
                         "p50_ms": 1.0, "p99_ms": 3.0})
    return scale.ScaleResults(sizes, partitions, connections, steps, groups)


def comparison(produce_100: float = 1.2, kb_1: float = 1.8) -> compare_brokers.Comparison:
    tansu = {workload: (100.0, 100.0, 2.0, 1.0) for workload in compare_brokers.WORKLOADS}
    spate = {(size, acks): ((produce_100 if size == 100 else kb_1) * 100.0, kb_1 * 100.0, 1.0, 0.2)
             for size, acks in compare_brokers.WORKLOADS}
    return compare_brokers.Comparison(spate, tansu, loopback_mb_s=2000.0, disk_mb_s=400.0)


def sink_runs(records: int, ratio_at_8: float = 0.9) -> list[SinkRun]:
    return [SinkRun("exactly_once", 4, records, 1.0, 4), SinkRun("at_least_once", 4, records, 1.0, 4),
            SinkRun("exactly_once", 8, records, 1.0 / ratio_at_8, 4), SinkRun("at_least_once", 8, records, 1.0, 4)]


def stream_figures(rate: int, batch_ms: float, record_ms: float) -> StreamFigures:
    runs = [LatencyResult(g, batch_ms=[batch_ms] * 20, record_ms=[record_ms] * 200) for g in ("at_least_once",)]
    return StreamFigures(rate, 100, runs)


def all_met(quick: bool = False) -> Results:
    return Results(
        quick=quick,
        spark_read=[SizeResult(100, 1_000_000, 1.0, 0.6, 0.95, 0.3), SizeResult(1000, 250_000, 1.0, 0.5, 0.9, 0.5)],
        spark_stream=stream_figures(10_000, 200.0, 800.0),
        spark_sink=sink_runs(200_000),
        brokers=comparison(),
        scale=scale_results(scale.QUICK if quick else scale.FULL),
    )


def rows_of(rows: list[TargetRow], target: report_targets.Target) -> list[TargetRow]:
    return [r for r in rows if r.target == target.text]


def test_every_target_of_the_issue_has_a_row_and_all_are_met_with_good_figures() -> None:
    rows = evaluate(all_met())
    assert {r.target for r in rows} == {t.text for targets in report_targets.TARGETS_OF.values() for t in targets}
    assert [r for r in rows if r.result != "met"] == []
    # 2 sizes x 2 read ratios, 2 stream figures, 2 sink partition counts, 2 + 4 broker ratios, 2 + 1 partition
    # rows, 2 connection rows, 2 log rows, 2 rebalances, 2 commit rows.
    assert len(rows) == 4 + 2 + 2 + 6 + 3 + 2 + 2 + 2 + 2


def test_a_missed_ratio_says_the_figure_the_target_and_by_how_much() -> None:
    results = all_met()
    results.spark_read = [SizeResult(100, 1_000_000, spate_s=1.0, parquet_s=0.32, ceiling_s=0.5, local_s=0.3)]
    parquet, = rows_of(evaluate(results), READ_PARQUET)
    ceiling, = rows_of(evaluate(results), READ_CEILING)
    assert parquet == TargetRow(READ_PARQUET.text, "100 B, 1,000,000 records", "0.32",
                                "0.32 of 0.5: missed by 1.6x")
    assert ceiling.result == "0.50 of 0.9: missed by 1.8x"


def test_a_missed_ceiling_says_how_far_above_it_the_figure_is() -> None:
    results = all_met()
    results.spark_stream = stream_figures(10_000, batch_ms=450.0, record_ms=1_050.0)
    rows = evaluate(results)
    batch, = rows_of(rows, report_targets.STREAM_BATCH)
    e2e, = rows_of(rows, report_targets.STREAM_E2E)
    assert batch.measured == "450 ms" and batch.result == "450 ms of 300 ms: missed by 1.5x"
    assert e2e.result == "1,050 ms of 1,000 ms: missed by 1.05x"
    assert batch.case == "at_least_once, 10,000 records/s, 100 ms trigger"


def test_errors_and_failed_commits_miss_their_target_of_none() -> None:
    results = all_met()
    results.scale = scale_results(scale.FULL, errors=3)
    errors, = rows_of(evaluate(results), report_targets.CONNECTIONS_ERRORS)
    assert errors.case == "1,000 connections" and errors.result == "3 errors: missed"


def test_the_sink_is_judged_at_8_partitions_and_reported_at_4() -> None:
    results = all_met()
    results.spark_sink = sink_runs(200_000, ratio_at_8=0.7)
    at_8, at_4 = rows_of(evaluate(results), SINK)
    assert (at_8.case, at_8.measured, at_8.result) == ("8 partitions, 200,000 records", "0.70",
                                                       "0.70 of 0.8: missed by 1.1x")
    assert (at_4.case, at_4.result) == ("4 partitions, 200,000 records", "met")


def test_broker_ratios_are_spate_over_tansu_per_workload() -> None:
    results = all_met()
    results.brokers = comparison(produce_100=0.85, kb_1=1.2)
    rows = evaluate(results)
    assert [(r.case, r.result) for r in rows_of(rows, report_targets.PRODUCE_100)] == [
        ("produce, acks=1", "0.85 of 1: missed by 1.2x"), ("produce, acks=all", "0.85 of 1: missed by 1.2x")]
    assert [r.case for r in rows_of(rows, KB_1)] == [
        "produce, acks=1", "produce, acks=all", "consume, acks=1", "consume, acks=all"]
    assert all(r.result == "1.20 of 1.5: missed by 1.2x" for r in rows_of(rows, KB_1))


def test_partitions_report_both_spreads_against_one_partition() -> None:
    results = all_met()
    results.scale = scale_results(scale.FULL, worst_partition_ratio=0.1, restart_s=29.3)
    rows = evaluate(results)
    by_record, in_runs = rows_of(rows, report_targets.PARTITIONS)
    restart, = rows_of(rows, report_targets.RESTART)
    assert by_record.case == "10,000 partitions, record by record, against 1"
    assert by_record.result == "0.10 of 0.5: missed by 5.0x"
    assert (in_runs.case, in_runs.measured, in_runs.result) == ("10,000 partitions, in runs, against 1", "0.80", "met")
    assert restart.result == "29.3 s of 10 s: missed by 2.9x"


def test_log_growth_compares_the_last_step_with_the_first() -> None:
    produce, fetch = rows_of(evaluate(all_met()), report_targets.LOG_PRODUCE) + rows_of(
        evaluate(all_met()), report_targets.LOG_FETCH)
    assert produce.case == fetch.case == "1.0 → 20.0 GB"
    assert (produce.measured, fetch.measured) == ("0.90", "1.20")


def test_a_benchmark_left_out_by_only_gives_not_run_rows_for_its_targets() -> None:
    results = all_met()
    results.spark_read = None
    results.scale = None
    rows = evaluate(results)
    skipped = [r for r in rows if r.result == "not run (--only)"]
    skipped_targets = report_targets.TARGETS_OF["spark-read"] + report_targets.TARGETS_OF["scale"]
    assert [r.target for r in skipped] == [t.text for t in skipped_targets]
    assert all(r.measured == "–" for r in skipped)
    assert all(r.result == "met" for r in rows if r not in skipped)


def test_a_failed_benchmark_gives_failed_rows_with_its_error() -> None:
    results = all_met()
    results.brokers = None
    results.failures["brokers"] = "TimeoutError: Tansu did not start"
    rows = rows_of(evaluate(results), KB_1)
    assert [r.result for r in rows] == ["failed: TimeoutError: Tansu did not start"]


def test_quick_sizes_are_named_in_each_case_against_the_targets_sizes() -> None:
    results = all_met(quick=True)
    results.spark_read = [SizeResult(100, 50_000, 1.0, 0.6, 0.95, 0.3)]
    results.spark_stream = stream_figures(2_000, 200.0, 800.0)
    rows = evaluate(results)
    by_record = rows_of(rows, report_targets.PARTITIONS)[0]
    assert by_record.case == "100 partitions (largest run; target at 10,000), record by record, against 1"
    assert rows_of(rows, report_targets.CONNECTIONS_P99)[0].case == "50 connections (largest run; target at 1,000)"
    assert rows_of(rows, report_targets.LOG_PRODUCE)[0].case == "0.1 → 0.2 GB (target to 20 GB)"
    assert [r.case for r in rows_of(rows, report_targets.REBALANCE)] == [
        "classic, 50 members (largest run; target at 1,000)",
        "consumer (KIP-848), 50 members (largest run; target at 1,000)"]
    assert rows_of(rows, report_targets.COMMIT_RATE)[0].case == "50 groups (largest run; target at 1,000)"
    assert rows_of(rows, READ_PARQUET)[0].case == "100 B, 50,000 records"
    assert rows_of(rows, report_targets.STREAM_BATCH)[0].case == (
        "at_least_once, 2,000 records/s, 100 ms trigger (target at 10,000 records/s, 100 ms)")


def test_the_table_counts_targets_met_and_says_when_sizes_were_quick() -> None:
    rows = [TargetRow("t ≥ 1", "a", "2.00", "met"), TargetRow("t ≥ 1", "b", "0.50", "0.50 of 1: missed by 2.0x")]
    full = table(rows, quick=False)
    assert full.splitlines()[:4] == ["| target | case | measured | result |", "|---|---|---:|---|",
                                     "| t ≥ 1 | a | 2.00 | met |", "| t ≥ 1 | b | 0.50 | 0.50 of 1: missed by 2.0x |"]
    assert "1 of 2 met." in full and "--quick" not in full
    assert "--quick: every figure comes from the small sizes" in table(rows, quick=True)


@pytest.mark.parametrize("quick", [False, True])
def test_every_benchmark_accepts_the_arguments_the_report_gives_it(quick: bool) -> None:
    pick = 1 if quick else 0
    assert spark_read_bench.parse_args(report.SPARK_READ_ARGS[pick]).runs == (2 if quick else 3)
    assert spark_stream_bench.parse_args(report.SPARK_STREAM_ARGS[pick]).rate == 10_000
    assert spark_stream_bench.parse_args(report.SPARK_STREAM_ARGS[pick]).trigger_ms == 100
    assert spark_sink_bench.parse_args(report.SPARK_SINK_ARGS[pick]).partitions == "4,8"
    assert compare_brokers.parse_args(report.BROKERS_ARGS[pick]).records == (30_000 if quick else 200_000)


def test_only_accepts_the_benchmarks_names_only(capsys) -> None:
    with pytest.raises(SystemExit):
        report.main(["--only", "spark-write"])
    assert "invalid choice" in capsys.readouterr().err


def test_a_failing_benchmark_is_reported_the_others_still_run_and_the_command_exits_1(monkeypatch, capsys) -> None:
    ran = []

    def broken(results: Results, plots) -> None:
        ran.append("brokers")
        raise TimeoutError("Tansu did not start")

    def scale_run(results: Results, plots) -> None:
        ran.append("scale")
        results.scale = scale_results(scale.QUICK)

    monkeypatch.setitem(report.RUNNERS, "brokers", broken)
    monkeypatch.setitem(report.RUNNERS, "scale", scale_run)
    assert report.main(["--quick", "--only", "scale", "brokers"]) == 1
    out = capsys.readouterr().out
    assert ran == ["brokers", "scale"]  # in the report's order, not the command line's
    assert "brokers failed: TimeoutError: Tansu did not start" in out
    assert "| failed: TimeoutError: Tansu did not start |" in out
    assert "| not run (--only) |" in out and "--quick: every figure" in out
