@generated
Feature: Generated sessions
  A seeded run of many actions by several users: telling and correcting facts, asking about them, small talk, new
  and reopened conversations, closing the browser, time passing, signing out, deleting an account and opening it
  again, and taking memory back: deleting, editing and clearing memories, deleting conversations, turning memory off
  and on. Texts mix quotes, backslashes, newlines, emoji, CJK, right-to-left and HTML-like text, and some users hold
  identical facts. After every action, what each user sees and is answered is compared with a plain model of what
  they did, on full content and only the owner's. A failure prints the seed and the actions that reproduce it.

  Each session shows every transition of the model once: each kind of action followed by each later read its effect
  can change (talking in an older conversation, then the list's order; a correction, then the answer in the older
  conversation that said the old value; ...). The seeds are listed in one file; those that once found a bug on the
  app are acted out first, in browsers, as they were found.

  Scenario Outline: The listed seeds' sessions of several users are remembered exactly as the model says
    Given the <seeds> of 60 actions by 3 users, <how>
    When the users act them out
    Then everything each user was told is remembered exactly as the model says

    Examples:
      | seeds                | how                       |
      | first seed's session | each in their own browser |

    @more_seeds
    Examples: The other listed seeds
      | seeds                 | how                        |
      | other seeds' sessions | each through the app's API |

  @long_form
  Scenario: A long seeded session of several users is remembered exactly as the model says
    Given the first seed's session of 300 actions by 4 users, each in their own browser
    When the users act them out
    Then everything each user was told is remembered exactly as the model says
