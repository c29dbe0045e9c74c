"""JAAS login configuration files, as Kafka's brokers point ``java.security.auth.login.config`` at them."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.cluster.zk.jaas_file import JaasFileError, parse_jaas_sections, read_jaas_file

KAFKA_STYLE_FILE = """\
// The broker's listeners and its login to ZooKeeper, in one file.
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin"
    password="admin-secret"
    user_admin="admin-secret";
};

/* ZooKeeper's digest login:
   one entry. */
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="p;a\\"ss{}";
};
"""


def test_sections_are_read_by_name_with_their_entries_and_options() -> None:
    sections = parse_jaas_sections(KAFKA_STYLE_FILE)
    assert sorted(sections) == ["Client", "KafkaServer"]
    (client,) = sections["Client"]
    assert client.login_module == "org.apache.zookeeper.server.auth.DigestLoginModule"
    assert client.flag == "required"
    assert client.options == {"username": "kafka", "password": 'p;a"ss{}'}
    assert sections["KafkaServer"][0].users == {"admin": "admin-secret"}


def test_a_section_may_hold_several_entries_and_bare_word_values() -> None:
    text = "Other { a.B optional debug=true; c.D sufficient; };"
    (first, second) = parse_jaas_sections(text)["Other"]
    assert (first.login_module, first.flag, first.options) == ("a.B", "optional", {"debug": "true"})
    assert (second.login_module, second.flag, second.options) == ("c.D", "sufficient", {})


@pytest.mark.parametrize(
    "text, reason",
    [
        ('Client { m.M required username="u" };', "must be key=value, ending ';'"),
        ('Client { m.M required username="u"; }', "must end with '};'"),
        ('Client { m.M always username="u"; };', "control flag 'always'"),
        ('Client { m.M required username=; };', "option username has no value"),
        ("Client { };", "has no login module"),
        ('Client m.M required;', "expected a section name followed by '{'"),
        ('Client { m.M required password="unclosed; };', "unexpected character"),
        ('A { m.M required; }; A { m.M required; };', "section A appears twice"),
    ],
)
def test_malformed_files_are_errors_saying_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(JaasFileError, match=reason.replace("(", r"\(").replace("{", r"\{")):
        parse_jaas_sections(text, where="jaas.conf")


def test_errors_never_repeat_option_values() -> None:
    with pytest.raises(JaasFileError) as info:
        parse_jaas_sections('Client { m.M required password="hunter2" username };')
    assert "hunter2" not in str(info.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(JaasFileError, match=f"JAAS file {tmp_path / 'absent.conf'} does not exist"):
        read_jaas_file(tmp_path / "absent.conf")
