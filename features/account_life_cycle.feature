@isolation @account
Feature: Account life cycle
  What a user told the assistant lives and dies with the account: after the account is deleted its sessions are
  refused, and nothing of it reaches anybody, not even a new account opened with the same e-mail address.

  Scenario: A deleted account leaves nothing behind for a new account with the same address
    Given Ana is signed in
    And Ana starts a new conversation
    And Ana tells the assistant "My bank PIN is 8080."
    When Ana's account is deleted
    Then the session Ana had is refused by the app
    When a new account is opened with Ana's e-mail address and signs in
    Then she has no conversations and no memories
    When she asks in a new conversation "What is my bank PIN?"
    Then the assistant answers "I don't remember your bank pin."

  Scenario: Deleting an account deletes its conversations and memories from the app's store
    Given Ana is signed in
    And Ana starts a new conversation
    When Ana tells the assistant "My bank PIN is 8080."
    Then her long-term memory soon holds "My bank PIN is 8080."
    When Ana's account is deleted
    Then the app's store holds nothing of Ana's account

  Scenario: An account an operator adds on the app's command line is Ana's, and deleting it there leaves nothing
    Given an operator adds an account for Ana on the app's command line
    And Ana is signed in
    And Ana starts a new conversation
    And Ana tells the assistant "My bank PIN is 8080."
    When an operator deletes Ana's account on the app's command line
    Then the session Ana had is refused by the app
    And the app's store holds nothing of Ana's account

  Scenario: An operator who adds an address that has an account, or deletes one nobody has, is refused in one line
    Given Ana has an account
    When an operator adds an account with Ana's address on the app's command line
    And an operator deletes the account of an address nobody has on the app's command line
    Then the app's command line refuses each in one line, and Ana still signs in with her password

  Scenario: A wrong password and an address nobody has are refused alike
    Given Ana has an account
    When someone signs in as Ana with a wrong password
    And someone signs in with an address nobody has
    Then both are refused with the same words, and neither is signed in
