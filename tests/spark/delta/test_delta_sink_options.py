"""The spate-delta sink's options: checked before anything is written, errors name the option."""

from __future__ import annotations

import os

import pytest

from spark_ext.delta.options import DeltaSinkOptionError, parse_delta_sink_options


def parse(streaming=True, **options):
    return parse_delta_sink_options(options, streaming=streaming)


def test_defaults_for_a_plain_path():
    options = parse(path="tables/orders")
    assert options.table_uri == os.path.abspath("tables/orders")
    assert (options.partition_by, options.merge_schema, options.target_file_size) == (None, False, 128 << 20)
    assert options.txn_app_id is None and options.storage_options == {}


def test_uris_are_kept_and_file_uris_become_paths():
    assert parse(path="s3://bucket/tables/orders/").table_uri == "s3://bucket/tables/orders"
    assert parse(path="file:///data/orders").table_uri == "/data/orders"


def test_every_option_is_read_case_insensitively():
    options = parse(PATH="/t", partitionby="day, hour", MERGESCHEMA="true", targetFileSize="64m", txnappid="app-1",
                    **{"storage.AWS_REGION": "eu-west-1"})
    assert options.partition_by == ("day", "hour")
    assert options.merge_schema and options.target_file_size == 64 << 20
    assert options.txn_app_id == "app-1"
    assert options.storage_options == {"aws_region": "eu-west-1"}


@pytest.mark.parametrize(
    ("options", "option", "problem"),
    [
        ({}, "path", "is required"),
        ({"path": "/t", "mergeSchema": "yes"}, "mergeSchema", "true or false"),
        ({"path": "/t", "targetFileSize": "0"}, "targetFileSize", "positive size"),
        ({"path": "/t", "targetFileSize": "lots"}, "targetFileSize", "positive size"),
        ({"path": "/t", "partitionBy": "day,day"}, "partitionBy", "twice"),
        ({"path": "/t", "txnAppId": " "}, "txnAppId", "is empty"),
        ({"path": "/t", "txnVersion": "3"}, "txnVersion", "batch writes only"),
        ({"path": "/t", "testFailTaskProbability": "2"}, "testFailTaskProbability", "from 0 to 1"),
        ({"path": "/t", "compression": "snappy"}, "compression", "not an option"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options, option, problem):
    with pytest.raises(DeltaSinkOptionError, match=problem) as raised:
        parse(**options)
    assert raised.value.option == option
    assert f"spate-delta sink option '{option}'" in str(raised.value)


def test_batch_writes_take_a_txn_version_only_with_an_app_id():
    assert parse(streaming=False, path="/t", txnAppId="nightly", txnVersion="7").txn_version == 7
    with pytest.raises(DeltaSinkOptionError, match="needs txnAppId"):
        parse(streaming=False, path="/t", txnVersion="7")
    with pytest.raises(DeltaSinkOptionError, match="whole number"):
        parse(streaming=False, path="/t", txnAppId="a", txnVersion="-1")
