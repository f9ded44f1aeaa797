@migration @embedding_change
Feature: Recall survives a change of embedding model
  Moving to a new embedding model, following the upgrade procedure (re-embed, then switch), keeps every memory
  recallable.

  Scenario: Memories written under the old model are recalled under the new one
    Given an app of its own running the "hash-ngram-v1" embedding model
    And Ana is signed in
    And Ana's long-term memory holds:
      | memory                              |
      | My insurance number is AZ-4471-K.   |
      | My sister's birthday is 14 March.   |
      | My gate code is 7731.               |
    When the app moves to the "hash-ngram-v2" embedding model following the upgrade procedure
    And Ana starts a new conversation
    Then the assistant answers each of her questions about them correctly
    And searching Ana's memory for each of them finds it first
