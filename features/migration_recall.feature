@migration
Feature: Recall survives the migration from Redis to PostgreSQL + pgvector
  Every historical memory in the legacy Redis store is still recalled, for its owner only, with the same ranking and
  scores, after the app's migration has moved it to PostgreSQL + pgvector.

  @smoke
  Scenario Outline: Every historical memory is recalled after the migration
    Given the legacy Redis store holds the golden snapshot "household"
    When the memories are migrated to PostgreSQL in batches of <batch size> with the "<embedder>" embedding model
    Then the migration reports every memory read and written
    And every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores

    Examples:
      | batch size | embedder      |
      | 7          | hash-ngram-v1 |
      | 50         | hash-ngram-v1 |
      | 500        | hash-ngram-v1 |
      | 16         | hash-ngram-v2 |

  Scenario Outline: Every memory of a long history is recalled after the migration, memory by memory
    Given the legacy Redis store holds a generated history of <size> memories
    When the memories are migrated to PostgreSQL in batches of 500 with the "hash-ngram-v1" embedding model
    Then the migration reports every memory read and written
    And every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores

    # 1,000 memories run by default through the migration the app declares (replay_through_changes.feature).
    @scale
    Examples: at scale (make replay-scale)
      | size      |
      | 10,000    |
      | 100,000   |
      | 1,000,000 |

  Scenario Outline: A vector lost after the migration is named, among <size> memories
    Given the legacy Redis store holds a generated history of <size> memories
    And the memories are migrated to PostgreSQL in batches of 500 with the "hash-ngram-v1" embedding model
    When one migrated memory's vector is removed from the store by hand
    Then the replay names exactly that memory as lost, and only it

    @scale
    Examples: at scale (make replay-scale)
      | size    |
      | 100,000 |

  Scenario: A history captured from the running app replays into a fresh store with every answer unchanged
    Given users have told the app facts in several conversations
    When the app's memory is captured as a snapshot, with questions sampled from it
    And the snapshot is replayed into a fresh store through the migration
    Then the migration reports every memory read and written
    And every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores

  Scenario: A team's own memories, imported from outside, are recalled after the migration
    Given the legacy Redis store holds the memories imported from "snapshots/examples/import"
    When the memories are migrated to PostgreSQL in batches of 7 with the "hash-ngram-v1" embedding model
    Then the migration reports every memory read and written
    And every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores

  Scenario: Running the migration again changes nothing
    Given the legacy Redis store holds the golden snapshot "household"
    And the memories are migrated to PostgreSQL in batches of 50 with the "hash-ngram-v1" embedding model
    When the memories are migrated to PostgreSQL in batches of 50 with the "hash-ngram-v1" embedding model
    Then the second migration writes nothing and skips every memory as already present
    And every historical memory is recalled for its owner and for nobody else

  Scenario: Owners searched through an ivfflat index recall what a full scan would
    Given an app that searches owners with many memories through an "ivfflat" index
    And the legacy Redis store holds 1500 generated memories of one owner
    When the memories are migrated to PostgreSQL in batches of 500 with the "hash-ngram-v1" embedding model
    Then 40 questions of that owner recall exactly what a full scan of the owner's memories ranks first
