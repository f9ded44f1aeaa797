@limits
Feature: Lists, messages and searches of every size
  However many memories and conversations a user has, every list shows all of them, in order; a message as long as
  the app accepts comes back exactly, and a longer one is refused with an error, never kept in part. A search for as
  many memories as the app returns at once finds what a full scan of the user's memories ranks, through whichever
  index the app searches them; and however many users search at once, the app holds no more connections to its
  database than it declares, and answers each of them.

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

  Scenario: Ana asks for as many memories as a search returns and gets what a full scan ranks, whatever index kind the app searches through
    Given an app of its own that searches every owner's memories through the "<index kind>" index it declares
    And Ana has told the app more about her gate codes than a search returns at once
    And Ben has told the app one thing
    And the app has restarted on its data, as a deploy restarts it
    When each of them searches their memory for as many memories as a search returns
    Then the app's store holds the vector index the app promises for the "<index kind>" index, and it is valid
    And each of them gets what a full scan of their own memories ranks, in order, with the same scores, through the "<index kind>" index

  Scenario: A search finds only the memories as similar to what is asked as the app's operators require
    Given the app's operators recall only memories at least 0.6 similar to what is asked
    And Ana has told the app more about her gate codes than a search returns at once
    When each of them searches their memory for as many memories as a search returns
    Then each of them gets what a full scan of their own memories ranks as similar as the app's operators require, in order, with the same scores

  Scenario: However many users search at once, the app holds no more connections to its database than it declares
    Given an app of its own that many users search at once
    And more users than the app holds connections to its database have each told it their gate code
    When they all search their memories at once, while an operator's maintenance holds the app's database
    Then the app held as many connections to its database as it declares, and never more
    And once the maintenance is over, each of them gets what a full scan of their own memories ranks
