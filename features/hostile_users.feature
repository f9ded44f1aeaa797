@isolation @hostile
Feature: Hostile users
  A signed-in user who writes to the app's API with another user's ids, in the address, the body or a header,
  changes nothing of theirs. Wrong passwords typed by others never keep a user out longer than the app declares.
  And an address is matched exactly, whatever characters it holds.

  Scenario: Nobody can change or delete another user's memories or conversations through the API
    Given Ana is signed in
    And Ana tells the assistant "My bank PIN is 8080."
    And Ben is signed in
    When Ben tries every write the app's API offers on Ana's memories, conversations and settings
    Then the app refused Ben every write on Ana's data
    And Ana's memories and conversations are exactly as before, every field and every turn
    When Ana starts a new conversation
    And Ana asks "What is my bank PIN?"
    Then the assistant answers "Your bank pin is 8080."

  Scenario: A user is let in with her own password whatever another typed
    Given the app locks sign-in after too many wrong passwords
    And Ana has an account
    When someone types wrong passwords for Ana's address, one fewer than the app locks sign-in after, from her network address
    Then Ana signs in with her own password

  Scenario: Wrong passwords another typed count no more once Ana has signed in
    Given the app locks sign-in after too many wrong passwords, and forgets them once the user signs in
    And Ana has an account
    When someone types wrong passwords for Ana's address, one fewer than the app locks sign-in after, from her network address
    Then Ana signs in with her own password
    When someone types wrong passwords for Ana's address, one fewer than the app locks sign-in after, from her network address
    Then Ana signs in with her own password

  Scenario: Wrong passwords typed for Ana's address from elsewhere do not lock her out
    Given the app locks sign-in after too many wrong passwords, counted by the network address they come from
    And Ana has an account
    When someone types wrong passwords for Ana's address, as many as the app locks sign-in after, from another network address
    Then Ana signs in with her own password

  Scenario: A user locked out by wrong passwords is let in once the declared lockout has passed
    Given the app locks sign-in after too many wrong passwords
    And an app whose clock the test can move
    And Ana has an account
    When someone types wrong passwords for Ana's address, as many as the app locks sign-in after, from her network address
    Then Ana's own password is refused while the lockout lasts
    When the lockout the app declares has passed
    Then Ana signs in with her own password

  Scenario Outline: Two users whose addresses differ only in a character a wildcard matches each reach their own account
    Given a user signed up as "<older>", and later another as "<newer>"
    When each of them signs in with their own address and password, and keeps a memory of their own
    Then each of them is shown as themselves, with only their own memory

    Examples:
      | older        | newer        |
      | ana11@x.test | ana_1@x.test |
      | ana11@x.test | ana%1@x.test |
      | ANA-B@x.test | ana_b@x.test |

  Scenario: Two users whose addresses differ only in a dot each reach their own account
    Given a user signed up as "anab@x.test", and later another as "ana.b@x.test"
    When each of them signs in with their own address and password, and keeps a memory of their own
    Then each of them is shown as themselves, with only their own memory
