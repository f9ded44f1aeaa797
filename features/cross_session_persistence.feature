@cross_session
Feature: Cross-session persistence
  Closing the browser loses nothing: the user stays signed in, finds the conversation and its whole history, and the
  assistant still knows what it was told.

  @smoke
  Scenario: Everything is still there after closing and reopening the browser
    Given Ana signs in through the login form in her own browser profile
    And Ana starts a new conversation
    When Ana tells the assistant "My order number is 4417."
    And Ana closes the browser
    And Ana opens the browser again with the same profile
    Then Ana is still signed in
    And her conversation is listed
    When Ana opens the conversation from the conversation list
    Then the history shows every turn of the conversation in order
    When Ana starts a new conversation
    And Ana asks "What is my order number?"
    Then the assistant answers "Your order number is 4417."

  Scenario: A memory is stored even when the page closes right after the reply
    Given Ana is signed in
    And Ana starts a new conversation
    When Ana tells the assistant "My passport number is X55123."
    And Ana closes the page right after the reply
    Then her long-term memory soon holds "My passport number is X55123."

  Scenario: Every fact of a long message is stored even when the page closes right after the reply
    A message of many facts makes more than one memory write: the page sends them one after the other, and when its
    tab closes, the writes still waiting behind the one on its way must leave too.
    Given Ana is signed in
    And Ana starts a new conversation
    When Ana tells the assistant 60 facts in one message
    And Ana closes the page right after the reply
    Then her long-term memory holds exactly these facts, in the order she told them

  Scenario: A memory is stored even when a busy page closes right after the reply
    A page that is still busy (a heavy page, or a loaded machine) when its tab closes is cut off by the browser
    before its pagehide: a write the page held back for later never leaves.
    Given Ana's computer is so busy that her pages are slow to answer
    And Ana is signed in
    And Ana starts a new conversation
    When Ana tells the assistant "My seat preference is aisle."
    And Ana closes the page right after the reply
    Then her long-term memory soon holds "My seat preference is aisle."

  Scenario: Every fact of a long message is stored even when a busy page closes right after the reply
    A message of many facts makes more than one memory write; a page cut off before its pagehide sends nothing
    more, so no write of the message may wait for another to be answered first.
    Given Ana's computer is so busy that her pages are slow to answer
    And Ana is signed in
    And Ana starts a new conversation
    When Ana tells the assistant 60 facts in one message
    And Ana closes the page right after the reply
    Then her long-term memory holds exactly these facts, in the order she told them

  Scenario: A fresh browser profile has to sign in again
    Given Ana signs in through the login form in her own browser profile
    And Ana starts a new conversation
    And Ana tells the assistant "My order number is 4417."
    When Ana opens the app in a fresh browser profile
    Then Ana is asked to sign in
    When Ana signs in through the login form
    Then her conversation is listed

  Scenario: Signing out ends the session on the server
    Given Ana is signed in
    When Ana signs out
    Then Ana is asked to sign in
    And the session Ana signed out of is refused by the app

  Scenario: More facts than the app recalls for one question are each answered in a later conversation
    Given Ana is signed in
    And Ana's long-term memory holds 12 facts about her
    When Ana starts a new conversation
    Then the assistant answers each of her questions about them correctly

  Scenario: A fact told right before signing out is remembered after signing in again
    Given Ana signs in through the login form in her own browser profile
    When Ana tells the assistant "My locker code is 5150."
    And Ana signs out
    And Ana signs in through the login form
    Then her long-term memory soon holds "My locker code is 5150."
    When Ana asks "What is my locker code?"
    Then the assistant answers "Your locker code is 5150."

  Scenario: A sign-in lasts at least a working day and is kept out of reach of the page
    Given Ana signs in through the login form in her own browser profile
    Then the sign-in the app gave Ana lasts at least a working day, and as long as the app promises
    And Ana's session is kept out of the page's address and out of reach of its scripts

  @expiry
  Scenario: A sign-in ends when its lifetime is over, not before
    Given an app whose clock the test can move
    And Ana signs in through the login form in her own browser profile
    When the app's sign-in lifetime has all but passed
    And Ana opens the app again
    Then Ana is still signed in
    When 2 more hours pass
    And Ana opens the app again
    Then Ana is asked to sign in

  Scenario: Ana on two browsers has two sessions, and signing out of one leaves the other signed in
    Given Ana signs in through the login form in her own browser profile
    And Ana signs in through the login form on a second browser
    Then Ana's two browsers hold different sessions
    When Ana tells the assistant "My gym locker is 118." on the second browser
    And Ana signs out on the second browser
    Then the session Ana signed out of is refused by the app
    When Ana opens the app again
    Then Ana is still signed in
    When Ana asks "What is my gym locker?"
    Then the assistant answers "Your gym locker is 118."

  Scenario: A restart of the app on its data keeps every sign-in and every memory
    Given an app of its own that the test can restart
    And Ana is signed in
    And Ana tells the assistant "My parking spot is B-7."
    And her long-term memory soon holds "My parking spot is B-7."
    And Ana tells the assistant "My locker code is 5150."
    And Ana deletes her memory "My locker code is 5150."
    When the app restarts on its data
    And Ana opens the app again
    Then Ana is still signed in
    And everything Ana had before the restart is still there
    And searching Ana's memory for "My locker code is 5150." finds no memory that reads it
    When Ana asks "What is my parking spot?"
    Then the assistant answers "Your parking spot is B-7."
    When Ana asks "What is my locker code?"
    Then the assistant answers "I don't remember your locker code."

  Scenario: An app its operator runs on databases of its own keeps every sign-in and memory in their data folder, and leaves nothing running once stopped
    Given an operator adds an account for Ana on the app's command line, in a new data folder for the app's own databases
    And the operator starts the app on its own databases in that folder
    And Ana is signed in
    And Ana tells the assistant "My parking spot is B-7."
    And her long-term memory soon holds "My parking spot is B-7."
    When the app restarts on its data
    And Ana opens the app again
    Then Ana is still signed in
    And everything Ana had before the restart is still there
    When Ana starts a new conversation
    And Ana asks "What is my parking spot?"
    Then the assistant answers "Your parking spot is B-7."
    When the operator stops the app with Ctrl-C
    Then the app ends as its operators are told, and nothing it started is left running

  Scenario: An app its operator gives a database but no other store keeps what Ana tells there, and leaves nothing running once stopped
    Given the operator starts the app on a new database, with its other stores its own in a new data folder
    And Ana is signed in
    And Ana tells the assistant "My parking spot is B-7."
    And her long-term memory soon holds "My parking spot is B-7."
    When Ana starts a new conversation
    And Ana asks "What is my parking spot?"
    Then the assistant answers "Your parking spot is B-7."
    When the operator stops the app with Ctrl-C
    Then the app ends as its operators are told, and nothing it started is left running
