"""SCRAM users managed with ``spate users`` (AlterUserScramCredentials / DescribeUserScramCredentials).

A user created through the PLAINTEXT listener can log in on the SASL
listener at once, with either mechanism and with PLAIN; deleting it locks it
out; refusals are one line naming the user and Kafka's error.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.scenarios.security.secure_broker import SecureBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def spate(secure: SecureBroker, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *args, "--bootstrap-server",
                           secure.address("PLAINTEXT")], capture_output=True, text=True, timeout=60)


def can_log_in(secure: SecureBroker, mechanism: str, user: str, password: str) -> bool:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": secure.address("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password})
    try:
        admin.list_topics(timeout=5)
        return True
    except Exception:
        return False


def test_a_created_user_logs_in_with_scram_and_plain_until_deleted(secure: SecureBroker) -> None:
    created = spate(secure, "users", "create", "carol", "--password", "carol-secret", "--iterations", "8192")
    assert created.returncode == 0, created.stderr
    assert "SCRAM-SHA-256, SCRAM-SHA-512 set" in created.stdout
    listed = spate(secure, "users", "list", "--output", "json")
    assert json.loads(listed.stdout)["carol"] == [{"mechanism": "SCRAM-SHA-256", "iterations": 8192},
                                                  {"mechanism": "SCRAM-SHA-512", "iterations": 8192}]
    assert "carol-secret" not in listed.stdout
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"):
        assert can_log_in(secure, mechanism, "carol", "carol-secret"), mechanism
    assert not can_log_in(secure, "SCRAM-SHA-512", "carol", "wrong")

    deleted = spate(secure, "users", "delete", "carol")
    assert deleted.returncode == 0, deleted.stderr
    assert "carol" not in json.loads(spate(secure, "users", "list", "--output", "json").stdout)
    assert not can_log_in(secure, "SCRAM-SHA-256", "carol", "carol-secret")


def test_one_mechanism_can_be_removed_alone(secure: SecureBroker) -> None:
    assert spate(secure, "users", "create", "dave", "--password", "d").returncode == 0
    assert spate(secure, "users", "delete", "dave", "--mechanism", "SCRAM-SHA-256").returncode == 0
    listed = json.loads(spate(secure, "users", "list", "--output", "json").stdout)
    assert listed["dave"] == [{"mechanism": "SCRAM-SHA-512", "iterations": 4096}]
    assert not can_log_in(secure, "SCRAM-SHA-256", "dave", "d") and can_log_in(secure, "SCRAM-SHA-512", "dave", "d")


def test_too_few_iterations_are_refused(secure: SecureBroker) -> None:
    result = spate(secure, "users", "create", "erin", "--password", "e", "--iterations", "100")
    assert result.returncode == 1
    assert "erin: UNACCEPTABLE_CREDENTIAL" in result.stderr and "100" in result.stderr


def test_deleting_an_unknown_user_names_it(secure: SecureBroker) -> None:
    result = spate(secure, "users", "delete", "nobody", "--mechanism", "SCRAM-SHA-512")
    assert result.returncode == 1 and "nobody: RESOURCE_NOT_FOUND" in result.stderr
