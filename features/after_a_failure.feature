@after_failure
Feature: After a failure
  A message the app could not answer, a reply lost on its way, or a restart of the app costs the user nothing she says
  afterwards in the same page: it is answered, remembered once, and the conversation keeps each message once (the
  failed one once or not at all, as the app stored it). A change of her memories or a deletion the app refused is
  told and changes nothing, and once it goes through nothing says it failed. A start its operators get wrong is refused in one line that says what to fix.

  Scenario: After a message the app refused, what Ana tells next in the same page is remembered, once
    Given Ana is signed in
    When Ana says "Good morning, I have a few things to note."
    And Ana's message "Are you still there?" is refused by the app
    Then Ana is told her message was not sent
    When Ana tells the assistant "My parking spot is B-7."
    Then the conversation keeps each message Ana typed once, and the refused one not at all
    And the assistant answers "Got it. I'll remember that your parking spot is B-7."
    And her long-term memory holds exactly these facts, in the order she told them
    And in a new conversation the assistant answers each of her questions about them correctly

  Scenario: After a reply lost to a dropped connection, what Ana tells next in the same page is remembered, once
    Given Ana is signed in
    When Ana says "Good morning, I have a few things to note."
    And the connection drops while Ana's message "Are you still there?" is answered
    Then Ana is told her message was not sent
    When Ana tells the assistant "My gym locker is 118."
    Then the conversation keeps each message Ana typed once, the dropped one included
    And the assistant answers "Got it. I'll remember that your gym locker is 118."
    And her long-term memory holds exactly these facts, in the order she told them
    And in a new conversation the assistant answers each of her questions about them correctly

  Scenario: A memory the app failed to keep is told to Ana, and what she tells next is remembered
    Given Ana is signed in
    When Ana tells the assistant "My locker code is 5150." and the app fails to keep it
    Then Ana is told what she said was not remembered
    When Ana tells the assistant "My parking spot is B-7."
    Then her long-term memory holds exactly these facts, in the order she told them

  Scenario: A deletion of a conversation the app refused is told to Ana, and once she deletes it again nothing says it failed
    Given Ana is signed in
    And Ana starts a new conversation
    And Ana tells the assistant "My locker code is 5150."
    And Ana starts a new conversation
    And Ana tells the assistant "My gate code is 7731."
    When Ana deletes the conversation in which she said "My locker code is 5150.", and the app refuses it
    Then Ana is told the conversation was not deleted, and it is still hers, with every turn
    When Ana deletes the conversation in which she said "My locker code is 5150."
    Then Ana's page no longer says anything failed
    And the conversation Ana deleted is gone from her list, from its address and from every read of the app's API

  Scenario: A change of a memory the app refused is told to Ana and changes nothing, and once she makes it again nothing says it failed
    Given Ana is signed in
    And Ana tells the assistant "My locker code is 5150."
    And Ana tells the assistant "My gate code is 7731."
    When Ana changes her memory "My locker code is 5150." to "My locker code is 5151.", and the app refuses it
    Then Ana is told her memories were not changed, and they are exactly as before
    When Ana changes her memory "My locker code is 5150." to "My locker code is 5151."
    Then Ana's page no longer says anything failed
    And Ana's memories are exactly, on her screen and through the app's API:
      | memory                  |
      | My locker code is 5151. |
      | My gate code is 7731.   |

  Scenario: A deletion of a memory the app refused is told to Ana and deletes nothing, and once she deletes it again nothing says it failed
    Given Ana is signed in
    And Ana tells the assistant "My locker code is 5150."
    And Ana tells the assistant "My gate code is 7731."
    When Ana deletes her memory "My locker code is 5150.", and the app refuses it
    Then Ana is told her memories were not changed, and they are exactly as before
    When Ana deletes her memory "My locker code is 5150."
    Then Ana's page no longer says anything failed
    And Ana's memories are exactly, on her screen and through the app's API:
      | memory                |
      | My gate code is 7731. |

  Scenario: A clearing of every memory the app refused is told to Ana and clears nothing, and once she clears them again nothing says it failed
    Given Ana is signed in
    And Ana tells the assistant "My locker code is 5150."
    And Ana tells the assistant "My gate code is 7731."
    When Ana clears all her memories, and the app refuses it
    Then Ana is told her memories were not changed, and they are exactly as before
    When Ana clears all her memories
    Then Ana's page no longer says anything failed
    And what Ana took back is neither listed nor found, and the app's store holds nothing of it

  Scenario: Memory turned off while the app refused it stays on, and once Ana turns it off again nothing says it failed
    Given Ana is signed in
    And Ana tells the assistant "My locker code is 5150."
    When Ana turns her memory off, and the app refuses it
    Then Ana is told her memories were not changed, and they are exactly as before
    When Ana turns her memory off
    Then Ana's page no longer says anything failed
    When Ana tells the assistant "My gate code is 7731."
    And Ana turns her memory on
    Then what Ana told before her memory was off is answered as the app documents, and nothing she told while it was off

  Scenario: After the app restarts mid-conversation, Ana's next message in the same page is answered and remembered
    Given an app of its own that the test can restart
    And Ana is signed in
    And Ana tells the assistant "My locker code is 5150."
    When the app restarts while Ana is in the conversation
    And Ana tells the assistant "My dentist is Doctor Okafor."
    Then the conversation keeps each message Ana typed once
    And the assistant answers "Got it. I'll remember that your dentist is Doctor Okafor."
    And her long-term memory holds exactly these facts, in the order she told them
    And in a new conversation the assistant answers each of her questions about them correctly

  Scenario: A start of the app with a mistake its operators are warned of is refused in one line that says what to fix
    When the app's operators start it with each mistake they are warned of
    Then each start is refused in one line that names what to fix
