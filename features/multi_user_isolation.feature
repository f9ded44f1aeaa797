@isolation
Feature: Multi-user isolation
  One user's conversations and memories are never shown or recalled to another user.

  @smoke
  Scenario: Two users at the same time each recall only their own secret
    Given Ana and Ben are signed in, each in their own browser
    When at the same time they tell the assistant their secrets:
      | user | secret                        |
      | Ana  | My secret word is pineapple.  |
      | Ben  | My secret word is walrus.     |
    And each of them starts a new conversation and asks "What is my secret word?"
    Then Ana hears "Your secret word is pineapple."
    And Ben hears "Your secret word is walrus."
    And the memories recalled for each of them are only their own

  Scenario: Users who hold identical facts each recall only their own memory of it
    Given Ana and Ben are signed in, each in their own browser
    When at the same time they tell the assistant their secrets:
      | user | secret                   |
      | Ana  | My locker code is 4242.  |
      | Ben  | My locker code is 4242.  |
    And each of them starts a new conversation and asks "What is my locker code?"
    Then Ana hears "Your locker code is 4242."
    And Ben hears "Your locker code is 4242."
    And the memories recalled for each of them are only their own

  Scenario: Another user's conversation cannot be opened by its address
    Given Ana is signed in
    And Ana starts a new conversation
    And Ana tells the assistant "My bank PIN is 8080."
    And Ben is signed in
    When Ben opens Ana's conversation by its address
    Then nothing of Ana's conversation is shown to Ben
    And the app's API refuses Ben Ana's conversation

  Scenario: A session the app never gave is refused
    Given Ana is signed in
    Then a session made up in the shape of Ana's is refused by the app

  Scenario: The conversation list shows only the user's own conversations
    Given Ana has 2 conversations
    And Ben has 1 conversation
    When Ben looks at his conversation list
    Then Ben sees exactly his own conversations

  Scenario Outline: Users with near-colliding e-mail addresses stay apart
    Given a user signed up as "<first>" who told the assistant "My favourite band is Lumen Drive."
    And a user signed up as "<second>" who told the assistant "My favourite band is Velvet Static."
    When the second user signs in with the address typed as "<typed>"
    And the second user asks in a new conversation "What is my favourite band?"
    Then the second user hears "Your favourite band is Velvet Static."
    And the memories recalled for the second user are only their own

    Examples:
      | first       | second       | typed        |
      | a@x.test    | a1@x.test    | a1@x.test    |
      | a@x.test    | A1@X.test    | a1@x.TEST    |
      | ana1@x.test | ana@x.test   | ANA@x.test   |

  Scenario: Owners with near-colliding ids in the memory store stay apart
    Given users whose ids differ by one character, each with their own memories:
      | id suffix | memory                             |
      | 7         | My car plate is KX-7001.           |
      | 77        | My car plate is ZB-7702.           |
      | 7a        | My car plate is QT-7703.           |
    Then searching the memory of each user for "What is my car plate?" finds only that user's memories
