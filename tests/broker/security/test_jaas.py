"""sasl.jaas.config: one JAAS login module entry, as Kafka writes it."""

from __future__ import annotations

import pytest

from broker_core.security.sasl.jaas import PLAIN_LOGIN_MODULE, JaasConfigError, parse_jaas_config


def test_plain_users_and_the_brokers_own_credentials() -> None:
    entry = parse_jaas_config(
        'org.apache.kafka.common.security.plain.PlainLoginModule required\n'
        '  username="admin" password="admin-secret"\n'
        '  user_admin="admin-secret" user_alice="alice \\"quoted\\" secret";'
    )
    assert entry.login_module == PLAIN_LOGIN_MODULE and entry.flag == "required"
    assert entry.username == "admin" and entry.password == "admin-secret"
    assert entry.users == {"admin": "admin-secret", "alice": 'alice "quoted" secret'}


def test_bare_word_values_are_accepted() -> None:
    entry = parse_jaas_config("org.apache.kafka.common.security.scram.ScramLoginModule optional username=bob;")
    assert entry.username == "bob" and entry.password is None


def test_the_repr_never_shows_passwords() -> None:
    entry = parse_jaas_config(f'{PLAIN_LOGIN_MODULE} required user_alice="hunter2";')
    assert "hunter2" not in repr(entry)


@pytest.mark.parametrize(
    "text, message",
    [
        (f'{PLAIN_LOGIN_MODULE} required user_alice="x"', "end with ';'"),
        (f'{PLAIN_LOGIN_MODULE} mandatory user_alice="x";', "control flag"),
        (f'{PLAIN_LOGIN_MODULE} required user_alice "x";', "key=value"),
        ("required;", "login module"),
        (f'{PLAIN_LOGIN_MODULE} required user_alice="x;', "unexpected character"),
    ],
)
def test_malformed_entries_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(JaasConfigError, match=message) as raised:
        parse_jaas_config(text)
    assert '"x"' not in str(raised.value)
