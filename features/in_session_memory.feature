@in_session
Feature: In-session memory
  Within one conversation the assistant keeps track of what the user has told it, and every turn is kept in order.

  Background:
    Given Ana is signed in
    And Ana starts a new conversation

  @smoke
  Scenario Outline: A fact told earlier in the conversation is recalled
    When Ana tells the assistant "My <fact> is <value>."
    And Ana says "Thanks, that is all for now."
    And Ana asks "What is my <fact>?"
    Then the assistant answers "Your <fact> is <value>."

    Examples:
      | fact             | value         |
      | order number     | 4417          |
      | home city        | North Jasonia |

  Scenario: Several facts told in one conversation are all recalled
    When Ana tells the assistant these facts:
      | fact             | value      |
      | order number     | 4417       |
      | dentist          | Doctor Okafor |
      | locker code      | 9-22-31    |
    Then the assistant answers each of her questions about them correctly

  Scenario: A correction replaces the old fact
    When Ana tells the assistant "My order number is 4417."
    And Ana tells the assistant "Actually, my order number is 5521."
    And Ana asks "What is my order number?"
    Then the assistant answers "Your order number is 5521."
    When Ana starts a new conversation
    And Ana asks "What is my order number?"
    Then the assistant answers "Your order number is 5521."

  Scenario: A fact whose name is a common word is recalled in a later conversation
    When Ana tells the assistant "My will is with the notary Smith."
    And Ana starts a new conversation
    And Ana asks "What is my will?"
    Then the assistant answers "Your will is with the notary Smith."
    And the memories recalled for Ana are her own, as her list gives them
    When Ana asks "Where is my will?"
    Then the assistant answers "Your will is with the notary Smith."
    And the memories recalled for Ana are her own, as her list gives them

  Scenario: Only the memory a question or a search is about is found for it
    When Ana tells the assistant "My dentist is Doctor Ruiz."
    And Ana tells the assistant "My locker code is 4242."
    And Ana tells the assistant "My travel plan is a slow train from Lisbon through Madrid, Barcelona, Marseille, Genoa, Florence and Rome, then a ferry to Split, Dubrovnik, Kotor and Athens in late September."
    And Ana tells the assistant "My soup recipe is onions, carrots, celery, garlic, thyme, bay leaves, chicken stock, barley, parsley and a squeeze of lemon, simmered slowly for three hours."
    And Ana starts a new conversation
    And Ana asks "What is my locker code?"
    Then the assistant answers "Your locker code is 4242."
    And the only memory recalled for Ana is "My locker code is 4242."
    And searching Ana's memory for "My travel plan is a slow train from Lisbon through Madrid, Barcelona, Marseille, Genoa, Florence and Rome, then a ferry to Split, Dubrovnik, Kotor and Athens in late September." finds that memory and no other

  Scenario: A fact as long as the longest message is remembered exactly
    When Ana tells the assistant a fact as long as the longest message, in Chinese
    Then her long-term memory holds exactly these facts, in the order she told them
    And searching her memory for each of them by its whole text finds it first
    And in a new conversation the assistant answers each of her questions about them correctly

  Scenario: Every fact of a message that states many at once is remembered
    When Ana tells the assistant 60 facts in one message
    Then her long-term memory holds exactly these facts, in the order she told them
    And in a new conversation the assistant answers her question about the last of them

  Scenario: Facts told in quick succession are all remembered
    When Ana tells the assistant these facts one right after the other:
      | fact          | value     |
      | gym locker    | 118       |
      | parking spot  | B-7       |
      | library card  | 55-0192   |
    Then her long-term memory holds exactly these facts, in the order she told them
    And in a new conversation the assistant answers each of her questions about them correctly

  Scenario: The history shows every turn in order
    When Ana tells the assistant "My train is the 7:40."
    And Ana says "Hello there!"
    And Ana asks "What is my train?"
    And Ana opens the conversation again from its address
    Then the history shows every turn of the conversation in order
    When Ana opens the conversation from the conversation list
    Then the history shows every turn of the conversation in order

  Scenario: A fact told early in a long conversation is still recalled, and the whole history is kept
    When Ana tells the assistant "My order number is 4417."
    And Ana chats about other things for 12 exchanges
    And Ana asks "What is my order number?"
    Then the assistant answers "Your order number is 4417."
    When Ana opens the conversation again from its address
    Then the history shows every turn of the conversation in order

  Scenario: A correction early in a long conversation beats the older value from another conversation
    When Ana tells the assistant "My order number is 4417."
    And Ana starts a new conversation
    And Ana tells the assistant "Actually, my order number is 5521."
    And Ana chats about other things for 12 exchanges
    And Ana asks "What is my order number?"
    Then the assistant answers "Your order number is 5521."

  Scenario: A correction made in another conversation wins when an older conversation is opened again
    When Ana tells the assistant "My order number is 4417."
    And Ana opens the conversation again from its address
    And Ana starts a new conversation
    And Ana tells the assistant "Actually, my order number is 5521."
    And Ana opens the conversation from the conversation list
    And Ana asks "What is my order number?"
    Then the assistant answers "Your order number is 5521."

  Scenario: A correction in other words wins over more earlier statements of the fact than a question recalls
    When Ana tells the assistant her locker code as many times as a question recalls memories, each time a new one
    And Ana starts a new conversation
    And Ana tells the assistant "Actually, my locker code is 9999, the one the gym gave everybody after it changed every lock in the building."
    Then in a new conversation the assistant answers her question about the last of them
    And the memories recalled for Ana are her own, as her list gives them

  Scenario: What Ana tells just before she moves to another conversation is remembered there
    When Ana tells the assistant "My order number is 4417."
    And Ana opens the conversation again from its address
    And Ana starts a new conversation
    And Ana tells the assistant "My locker code is 3141." and, before the answer shows, opens the conversation from the conversation list
    And Ana asks "What is my locker code?"
    Then the assistant answers "Your locker code is 3141."
    And her long-term memory holds exactly these facts, in the order she told them

  Scenario: What Ana sends before her last message is answered is answered after it, and both are remembered in her order
    When Ana tells the assistant "My locker code is 5150." and, before the answer shows, sends "My gate code is 7731." as well
    Then the history shows every turn of the conversation in order
    And her long-term memory holds exactly these facts, in the order she told them
    When Ana asks "What is my locker code?"
    Then the assistant answers "Your locker code is 5150."

  Scenario: A message typed with an input method is sent only when Ana sends it
    When Ana types "My home city is ", composes "東京" from "とうきょう" with an input method and confirms it, types "." and sends the message
    Then the history shows every turn of the conversation in order
    And the assistant answers "Got it. I'll remember that your home city is 東京."

  Scenario: A message of several lines comes back exactly, and the fact in it is remembered
    When Ana tells the assistant, over several lines:
      """
      Hello again!
      My postal address is 12 Main Street, Springfield.

      Thanks.
      """
    Then her long-term memory holds exactly these facts, in the order she told them
    And the assistant answers each of her questions about them correctly
    When Ana opens the conversation again from its address
    Then the history shows every turn of the conversation in order

  Scenario: A message of nothing but spaces and empty lines is not sent, and nothing says it failed
    When Ana tells the assistant "My locker code is 5150."
    And Ana presses Enter on a message of nothing but spaces and empty lines
    And Ana tells the assistant "My gate code is 7731."
    Then the history shows every turn of the conversation in order
    And her long-term memory holds exactly these facts, in the order she told them

  Scenario: What Ana types comes back exactly, whatever its characters
    When Ana tells the assistant these facts:
      | fact        | value                  |
      | signature   | <b>Ana</b> & co        |
      | nickname    | "Bo" O'Neil            |
      | home folder | C:\Users\ana\Documents |
      | dog         | 🐕 Rex the 2nd         |
      | home city   | 東京 (Tōkyō)            |
      | greeting    | שלום עולם              |
    Then the assistant answers each of her questions about them correctly
    And her long-term memory holds exactly these facts, in the order she told them
    When Ana opens the conversation again from its address
    Then the history shows every turn of the conversation in order
    And her conversation is listed first, under the start of her first message

  Scenario: A first message with an emoji across its 80th character starts its conversation, listed first
    Given Ana tells the assistant "My gym is Iron Works."
    And Ana starts a new conversation
    When Ana tells the assistant "My motto is Keep calm and carry on, then keep going and keep smiling all day 🙂🙂🙂."
    And Ana asks "What is my motto?"
    Then the assistant answers "Your motto is Keep calm and carry on, then keep going and keep smiling all day 🙂🙂🙂."
    And her conversation is listed first, under the start of her first message
    When Ana opens the conversation again from its address
    Then the history shows every turn of the conversation in order
    And her conversation is listed first, under the start of her first message
