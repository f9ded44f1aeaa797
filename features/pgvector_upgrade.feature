@migration @pgvector_upgrade
Feature: Recall survives a pgvector upgrade
  Bumping pgvector's minor version (0.6 to 0.8) must not change what any historical memory recalls: the golden
  snapshot is migrated onto both versions, every golden question recalls the same memories on both, in the same order
  with the same scores, and each version really searches through the index it was given. It runs where two
  providers with different pgvector versions are available (the embedded servers and containers of `make engine`).

  Scenario Outline: The golden snapshot recalls the same on both pgvector versions through <index>
    Given the legacy Redis store holds the golden snapshot "household"
    When it is migrated onto the other pgvector version too, with "<index>" here and "<index>" there
    Then every golden question recalls the same memories on both versions, in order, with the same scores
    And each version searched every owner through the index it was given

    Examples:
      | index    |
      | no index |
      | hnsw     |
      | ivfflat  |
