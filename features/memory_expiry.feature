@cross_session @expiry
Feature: Memory retention
  Memories are kept for the retention period (a year, or what the app's operators choose) and forgotten after it.

  Background:
    Given an app whose clock the test can move

  Scenario: A memory from a month ago is still recalled
    Given Ana is signed in
    And Ana told the assistant "My bike lock code is 3141." 30 days ago
    When Ana starts a new conversation
    And Ana asks "What is my bike lock code?"
    Then the assistant answers "Your bike lock code is 3141."

  Scenario Outline: A memory older than the retention period is forgotten, however her question is worded
    Given Ana is signed in
    And Ana told the assistant "<statement>" 400 days ago
    When Ana starts a new conversation
    And Ana asks "<question>"
    Then the assistant answers "<answer>"

    Examples:
      | statement                         | question                  | answer                                |
      | My old phone PIN is 2718.         | What is my old phone PIN? | I don't remember your old phone pin. |
      | My will is with the notary Smith. | What is my will?          | I don't remember your will.           |

  Scenario: A memory is kept for the whole retention period, and forgotten once it is over
    Given Ana is signed in
    And Ana told the assistant "My old phone PIN is 2718." just over the app's retention period ago, and "My bike lock code is 3141." just under it
    When Ana starts a new conversation
    And Ana asks "What is my bike lock code?"
    Then the assistant answers "Your bike lock code is 3141."
    When Ana asks "What is my old phone PIN?"
    Then the assistant answers "I don't remember your old phone pin."

  Scenario: The retention its operators choose is kept: a memory within it is recalled, one past it is forgotten
    Given the app's operators keep memories for 30 days
    And Ana is signed in
    And Ana told the assistant "My old phone PIN is 2718." 2 days ago
    And Ana told the assistant "My bike lock code is 3141." 29 days ago
    When Ana starts a new conversation
    And Ana asks "What is my bike lock code?"
    Then the assistant answers "Your bike lock code is 3141."
    When Ana asks "What is my old phone PIN?"
    Then the assistant answers "I don't remember your old phone pin."
