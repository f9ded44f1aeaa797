@generated
Feature: Generated sessions
  A seeded run of many actions by several users: telling and correcting facts, asking about them, small talk, new
  and reopened conversations, closing the browser, time passing, signing out, deleting an account and opening it
  again, and taking memory back: deleting, editing and clearing memories, deleting conversations, turning memory off
  and on. Texts mix quotes, backslashes, newlines, emoji, CJK, right-to-left and HTML-like text, and some users hold
  identical facts. After every action, what each user sees and is answered is compared with a plain model of what
  they did, on full content and only the owner's. A failure prints the seed and the actions that reproduce it.

  Scenario: A seeded session of several users is remembered exactly as the model says
    Given a seeded session of 40 actions by 3 users
    When the users act it out, each in their own browser
    Then everything each user was told is remembered exactly as the model says

  @long_form
  Scenario: A long seeded session of several users is remembered exactly as the model says
    Given a seeded session of 300 actions by 4 users
    When the users act it out, each in their own browser
    Then everything each user was told is remembered exactly as the model says
