"""harness.vocabulary.test_data.TestData: reproducible faker data per scenario, unique identities per run."""

from __future__ import annotations

from harness.vocabulary.test_data import DEFAULT_SEED, TestData


def _sample(data: TestData, key: str) -> list[str]:
    fake = data.faker_for(key)
    return [fake.name(), fake.city(), fake.color_name(), str(fake.random_int(0, 10**9))]


def test_email_carries_the_tag_and_keeps_case() -> None:
    data = TestData(DEFAULT_SEED, "gw0")
    assert data.email("Ana", "gw0abc123n7") == "Ana+gw0abc123n7@x.test"
    assert data.email("Ben.Okafor", "T1", domain="Example.TEST") == "Ben.Okafor+T1@Example.TEST"


def test_email_drops_characters_an_address_cannot_hold() -> None:
    data = TestData(DEFAULT_SEED, "gw0")
    assert data.email("Ana O'Neil", "t") == "AnaONeil+t@x.test"
    assert data.email("!!!", "t") == "user+t@x.test"
    assert data.email("", "t") == "user+t@x.test"


def test_same_seed_and_scenario_give_the_same_faker_output() -> None:
    one, two = TestData(1234, "gw0"), TestData(1234, "gw1")
    key = "features/in_session_memory.feature::test_a_fact[order number]"
    assert _sample(one, key) == _sample(two, key)
    assert _sample(one, key) == _sample(one, key), "a scenario's data does not depend on what ran before"


def test_different_scenario_or_seed_gives_different_faker_output() -> None:
    one = TestData(1234, "gw0")
    assert _sample(one, "scenario-a") != _sample(one, "scenario-b")
    assert _sample(one, "scenario-a") != _sample(TestData(1235, "gw0"), "scenario-a")


def test_unique_tag_carries_worker_and_run_and_increments() -> None:
    data = TestData(DEFAULT_SEED, "gw3")
    tags = [data.unique_tag() for _ in range(3)]
    assert tags == [f"gw3{data.run}n1", f"gw3{data.run}n2", f"gw3{data.run}n3"]
    other = TestData(DEFAULT_SEED, "gw3")
    assert other.run != data.run, "two runs against one long-lived app must not collide"
    assert other.unique_tag() not in tags


def test_password_differs_each_call() -> None:
    data = TestData(DEFAULT_SEED, "gw0")
    passwords = {data.password() for _ in range(20)}
    assert len(passwords) == 20
    assert all(p.startswith("pw-") and len(p) > 12 for p in passwords)


def test_not_collected_as_a_test_class() -> None:
    assert TestData.__test__ is False


def test_an_app_that_refuses_reserved_domains_gets_the_addresses_under_the_targets_domain() -> None:
    data = TestData(DEFAULT_SEED, "gw0", email_domain="example.com")
    assert data.email("ana", "t") == "ana+t@x.test.example.com"
    assert data.email("a1", "t", "x.TEST") == "a1+t@x.TEST.example.com"
