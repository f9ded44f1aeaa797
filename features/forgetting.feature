@forgetting
Feature: What users take back
  Users delete, correct and clear what the assistant remembers of them, delete conversations, and turn memory off.
  What they take back is forgotten for good: it is never answered in a later conversation, never listed, never found by
  search, it is gone from the app's store, and it does not come back; nobody else's memory changes. A conversation
  still open where a fact was said may still answer it from its own turns: forgotten means forgotten everywhere else.
  Where apps differ (what happens to the memories of a deleted conversation, and to the memories from before once
  memory is on again), the app's documented choice is declared in its target file and checked.

  Scenario: A memory Ana deletes is forgotten, and nobody else's memory changes
    Given Ana is signed in
    And Ana's long-term memory holds:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |
      | My bike lock is 2468.    |
    And Ben is signed in
    And Ben's long-term memory holds:
      | memory                   |
      | My locker code is 5150.  |
    When Ana deletes her memory "My locker code is 5150."
    And Ana deletes her memory "My bike lock is 2468."
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |
      | My gate code is 7731.    |
    And searching Ana's memory for "My locker code is 5150." finds no memory that reads it
    And the app's store holds nothing of what Ana took back
    And Ben's memories are still exactly:
      | memory                   |
      | My locker code is 5150.  |
    When Ana starts a new conversation
    And Ana asks "What is my locker code?"
    Then the assistant answers "I don't remember your locker code."
    When Ben starts a new conversation
    And Ben asks "What is my locker code?"
    Then the assistant answers "Your locker code is 5150."
    When Ana deletes her memory "My gate code is 7731."
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |

  Scenario: A change of a memory, or a clearing of them all, that Ana cancels changes nothing
    Given Ana is signed in
    And Ana's long-term memory holds:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |
    When Ana starts changing her memory "My locker code is 5150." to "My locker code is 9999." and cancels
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |
    When Ana starts clearing all her memories and cancels
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |

  Scenario: A corrected memory is answered, listed and found by its new text only
    Given Ana is signed in
    And Ana's long-term memory holds:
      | memory                   |
      | My locker is 5150.       |
      | My gate code is 7731.    |
    When Ana changes her memory "My locker is 5150." to "My locker code is 5150."
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |
    And searching Ana's memory for "What is my locker code?" finds "My locker code is 5150." first
    And searching Ana's memory for "My locker is 5150." finds no memory that reads it
    When Ana starts a new conversation
    And Ana asks "What is my locker code?"
    Then the assistant answers "Your locker code is 5150."
    When Ana asks "What is my locker?"
    Then the assistant answers "I don't remember your locker."

  Scenario: A memory Ana changes opens for her as it reads, whatever its characters
    Given Ana is signed in
    And Ana's long-term memory holds:
      | memory                            |
      | My signature is <b>Ana</b> & co.  |
      | My gate code is 7731.             |
    When Ana changes her memory "My signature is <b>Ana</b> & co." to "My signature is <i>Ana</i> & co."
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                            |
      | My signature is <i>Ana</i> & co.  |
      | My gate code is 7731.             |

  Scenario: Clearing all her memories empties Ana's memory, and only hers
    Given Ana is signed in
    And Ana's long-term memory holds:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |
    And Ben is signed in
    And Ben's long-term memory holds:
      | memory                   |
      | My gate code is 1234.    |
    When Ana clears all her memories
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |
    And the app's store holds nothing of what Ana took back
    And Ben's memories are still exactly:
      | memory                   |
      | My gate code is 1234.    |
    When Ana starts a new conversation
    And Ana asks "What is my gate code?"
    Then the assistant answers "I don't remember your gate code."

  Scenario: A deleted conversation is gone for good, and its memories are what the app documents
    Given Ana is signed in
    And Ana starts a new conversation
    And Ana tells the assistant "My locker code is 5150."
    And Ana starts a new conversation
    And Ana tells the assistant "My gate code is 7731."
    When Ana deletes the conversation in which she said "My locker code is 5150."
    Then the conversation Ana deleted is gone from her list, from its address and from every read of the app's API
    And her other conversation is still listed, with every turn
    And the memories told in the deleted conversation are kept or deleted, as the app documents

  Scenario: Ana deletes the conversation she is in, and what she tells next is kept in a new one
    Given Ana is signed in
    And Ana starts a new conversation
    And Ana tells the assistant "My locker code is 5150."
    When Ana deletes the conversation she is in
    Then Ana is in a new conversation, with no turns
    When Ana tells the assistant "My gate code is 7731."
    Then the conversation Ana deleted is gone from her list, from its address and from every read of the app's API
    And her other conversation is still listed, with every turn
    And the memories told in the deleted conversation are kept or deleted, as the app documents
    When Ana starts a new conversation
    And Ana asks "What is my gate code?"
    Then the assistant answers "Your gate code is 7731."

  Scenario: With her memory off, nothing Ana tells is remembered and nothing remembered is used, for her only
    Given Ana is signed in
    And Ana's long-term memory holds:
      | memory                   |
      | My gate code is 7731.    |
    And Ben is signed in
    And Ben's long-term memory holds:
      | memory                   |
      | My gate code is 1234.    |
    When Ana turns her memory off
    And Ana starts a new conversation
    And Ana asks "What is my gate code?"
    Then the assistant answers "I don't remember your gate code."
    When Ana tells the assistant "My locker code is 5150."
    And Ana starts a new conversation
    And Ana asks "What is my locker code?"
    Then the assistant answers "I don't remember your locker code."
    When Ben starts a new conversation
    And Ben asks "What is my gate code?"
    Then the assistant answers "Your gate code is 1234."
    When Ana turns her memory on
    Then what Ana told before her memory was off is answered as the app documents, and nothing she told while it was off
