@cross_session @expiry
Feature: Memory retention
  Memories are kept for the retention period (a year) and forgotten after it.

  Background:
    Given an app whose clock the test can move
    And Ana is signed in

  Scenario: A memory from a month ago is still recalled
    Given Ana told the assistant "My bike lock code is 3141." 30 days ago
    When Ana starts a new conversation
    And Ana asks "What is my bike lock code?"
    Then the assistant answers "Your bike lock code is 3141."

  Scenario: A memory older than the retention period is forgotten
    Given Ana told the assistant "My old phone PIN is 2718." 400 days ago
    When Ana starts a new conversation
    And Ana asks "What is my old phone PIN?"
    Then the assistant answers "I don't remember your old phone pin."
