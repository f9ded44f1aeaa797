@limits
Feature: Lists and messages of every size
  However many memories and conversations a user has, every list shows all of them, in order; a message as long as
  the app accepts comes back exactly, and a longer one is refused with an error, never kept in part.

  Scenario: Lists longer than a page of the app's are complete and in order
    Given Ana has more memories and conversations than a page of the app's lists holds
    When Ana looks at her conversation list
    Then Ana sees every one of her conversations, the most recent first
    And Ana's long-term memory lists every one of her memories, oldest first

  Scenario: A message longer than the app accepts is refused with an error, and nothing of it is kept
    Given Ana is signed in
    And Ana starts a new conversation
    When Ana sends a message one character longer than the app accepts
    Then Ana is told the message was not sent
    And nothing of that message is kept

  Scenario: Requests at the edges of the app's API are answered as it promises, and a refused one changes nothing
    Given Ana is signed in
    And Ana tells the assistant "My bank PIN is 8080."
    When Ana and the app's operator send the app's API a request at each edge it documents
    Then each is answered with the status the app promises for it: the largest accepted, one byte more refused as too large, a malformed one refused
    And Ana's memories changed only by what those requests were accepted to write
