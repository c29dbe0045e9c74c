"""ssl.principal.mapping.rules: Kafka's RULE:pattern/replacement/[LU] and DEFAULT."""

from __future__ import annotations

import pytest

from broker_core.security.principal import (
    InvalidMappingRuleError,
    NoMatchingRuleError,
    SslPrincipalMapper,
    distinguished_name,
)

DN = "CN=Alice,OU=Engineering,O=Example,L=Paris,C=FR"


def test_default_keeps_the_whole_subject() -> None:
    assert SslPrincipalMapper.from_rules("DEFAULT").name(DN) == DN


def test_a_rule_replaces_with_groups_and_the_first_match_wins() -> None:
    mapper = SslPrincipalMapper.from_rules(
        "RULE:^CN=(.*?),OU=Sales.*$/sales-$1/, RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L, DEFAULT"
    )
    assert mapper.name(DN) == "alice@engineering"
    assert mapper.name("CN=Bob,OU=Sales,O=Example") == "sales-Bob"
    assert mapper.name("O=Example") == "O=Example"


def test_upper_case_flag() -> None:
    assert SslPrincipalMapper.from_rules("RULE:^CN=([^,]*).*$/$1/U").name(DN) == "ALICE"


def test_a_pattern_must_match_the_whole_name() -> None:
    mapper = SslPrincipalMapper.from_rules("RULE:CN=Alice/x/")
    with pytest.raises(NoMatchingRuleError):
        mapper.name(DN)


def test_escaped_slashes_and_commas_belong_to_the_pattern() -> None:
    mapper = SslPrincipalMapper.from_rules(r"RULE:^CN=([^\/,]*)\/x,.*$/$1/")
    assert mapper.name("CN=svc/x,O=Example") == "svc"


@pytest.mark.parametrize("rules", ["", "RULE:abc", "DEFAULTS", "RULE:(/x/", "RULE:a/b/Q"])
def test_bad_rules_are_refused(rules: str) -> None:
    with pytest.raises(InvalidMappingRuleError):
        SslPrincipalMapper.from_rules(rules)


def test_a_peer_certificate_subject_reads_most_specific_first_with_escapes() -> None:
    subject = ((("countryName", "FR"),), (("organizationName", "Example, Inc."),), (("commonName", "alice"),))
    assert distinguished_name(subject) == r"CN=alice,O=Example\, Inc.,C=FR"
