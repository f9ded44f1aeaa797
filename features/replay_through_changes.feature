@migration
Feature: Every memory survives each change the app goes through
  A history of memories is put into the app as it is before a change its operators make (its store migrated, its
  embedding model changed with the re-index that goes with it, the app or its store upgraded), the app goes through
  the change the way they would, and then every memory is checked: still there, its owner's only, with its text,
  conversation and times unchanged, and recalled by its own text; every golden question recalls what it recalled
  before. The history is generated, a team's own imported from outside, or captured from the running app; and what a
  user told the app before the change is asked again after it. Each app declares its changes and the kinds of index
  its searches can go through in its target file, and each is one test case, named after it; the target also says
  which sizes of history it replays (an app whose every read goes through its API replays a few hundred memories),
  and, by index kind, a history past the limits of that index's parameters, which the change must build the index
  it promises for and that index answer as a full scan of each owner's memories does.

  Scenario Outline: Every memory of a history is recalled after the change, memory by memory
    Given a generated history of <size> memories, as the app holds it before the change "<change>"
    When the app goes through the change "<change>"
    Then every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores

    Examples:
      | size  |
      | 300   |
      | 1,000 |

    @scale
    Examples: at scale (make replay-scale)
      | size      |
      | 10,000    |
      | 100,000   |
      | 1,000,000 |

  Scenario Outline: A vector lost after the change is named, among <size> memories
    Given a generated history of <size> memories, as the app holds it before the change "<change>"
    And the app goes through the change "<change>"
    When one memory's vector is removed from the app's store by hand
    Then the replay names exactly that memory as lost, and only it

    @scale
    Examples: at scale (make replay-scale)
      | size    |
      | 100,000 |

  @smoke
  Scenario: A team's own memories, imported from outside, are recalled after the change, through each index kind
    Given an app that searches every owner's memories through the "<index kind>" index it declares
    And the memories imported from "snapshots/examples/import", as the app holds them before the change "<change>"
    When the app goes through the change "<change>"
    Then every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores
    And the app's store holds the vector index the app promises for the "<index kind>" index, and it is valid
    And every golden question was searched through the "<index kind>" index

  Scenario: A history past the limits of an index's parameters is migrated, and answered through that index as a full scan answers
    Given an app that searches every owner's memories through the "<index kind>" index it declares
    And a history past the limits of the "<index kind>" index's parameters, as the app holds it before the change "<change>"
    When the app goes through the change "<change>" as that history needs
    And the app has restarted on its data, as a deploy restarts it
    Then the app's store holds the vector index the app promises for the "<index kind>" index and that history, and it is valid
    And every golden question, asked for as many memories as a search returns, recalls what a full scan of its owner's memories ranks, through the "<index kind>" index

  Scenario: The index a change builds for many memories is given the memory it needs, and an operator who gives less is told
    Given an app that searches every owner's memories through the "<index kind>" index it declares
    And a history whose "<index kind>" index needs tens of megabytes to build, as the app holds it before the change "<change>"
    When the app goes through the change "<change>", its index's build memory left to the app
    Then the change told its operators of no index build that outgrew the memory it had
    When the operator runs the change "<change>" again, giving its index's build less memory than it needs
    Then the change told its operators that its index build outgrew the memory it had

  Scenario: The golden snapshot's questions keep the answers and scores recorded with it after the change
    Given the golden snapshot "household", as the app holds it before the change "<change>"
    When the app goes through the change "<change>"
    Then every historical memory is recalled for its owner and for nobody else
    And every golden question recalls the expected memories, in order, with the expected scores

  Scenario: A history captured from the running app is recalled after the change, with every answer unchanged
    Given users have told the app facts in several conversations, before the change "<change>"
    And the app's memory is captured as a snapshot, with questions sampled from it
    And the captured history, as the app holds it before the change "<change>"
    When the app goes through the change "<change>"
    Then every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times
    And every golden question recalls the expected memories, in order, with the expected scores

  Scenario: Each owner of a history captured from the running app is answered after the change as before it
    Given users have told the app facts in two conversations, some corrected in the second and one named by a common word, and saved a note as they pasted it, before the change "<change>"
    And each of them has asked the assistant about each of their facts in a new conversation, and was answered with its newest statement
    And each of them has listed their memories
    And the app's memory is captured as a snapshot, with the questions they asked
    And the captured history, as the app holds it before the change "<change>"
    When the app goes through the change "<change>"
    Then each owner of the captured history, asking the assistant the same questions in a new conversation, is answered exactly as before
    And each of them lists the same memories after the change, exactly as written and in the same order
    And each of them is answered as before until the retention of their memories ends, and that the assistant does not remember once it has

  Scenario: Each owner of a captured history is answered after the change as before it, through each index kind
    Given an app that searches every owner's memories through the "<index kind>" index it declares
    And users have told the app facts in two conversations, some corrected in the second and one named by a common word, and saved a note as they pasted it, before the change "<change>"
    And each of them has asked the assistant about each of their facts in a new conversation, and was answered with its newest statement
    And each of them has listed their memories
    And the app's memory is captured as a snapshot, with the questions they asked
    And the captured history, as the app holds it before the change "<change>"
    When the app goes through the change "<change>"
    Then each owner of the captured history, asking the assistant the same questions in a new conversation, is answered exactly as before
    And each of them lists the same memories after the change, exactly as written and in the same order
    And each of them is answered as before until the retention of their memories ends, and that the assistant does not remember once it has

  Scenario: What a user told the app before the change is answered in a new conversation after it
    Given an app of its own, as it is before the change "<change>"
    And Ana is signed in
    And Ana's long-term memory holds:
      | memory                              |
      | My insurance number is AZ-4471-K.   |
      | My sister's birthday is 14 March.   |
      | My gate code is 7731.               |
    When the app goes through the change "<change>"
    And Ana opens the app again
    And Ana starts a new conversation
    Then the assistant answers each of her questions about them correctly
    And searching Ana's memory for each of them finds it first

  Scenario: A correction told in the same second as what it corrects is still the answer after the change
    Given the memories imported from "snapshots/examples/same-second", as the app holds them before the change "<change>"
    When the app goes through the change "<change>"
    And Ana, one of the history's owners, asks "What is my gate code?" in a new conversation
    Then the assistant answers "Your gate code is 7731, the one the caretaker set after the break-in last spring."

  @forgetting
  Scenario: Nothing a user deleted before the change comes back after it
    Given an app of its own, as it is before the change "<change>"
    And Ana is signed in
    And Ana's long-term memory holds:
      | memory                   |
      | My locker code is 5150.  |
      | My gate code is 7731.    |
    And Ana deletes her memory "My locker code is 5150."
    When the app goes through the change "<change>"
    And Ana opens the app again
    Then Ana's memories are exactly, on her screen and through the app's API:
      | memory                   |
      | My gate code is 7731.    |
    And what Ana took back is neither listed nor found, and the app's store holds nothing of it

  Scenario: A change an operator runs with a mistake is refused in one line that says what to fix, and loses nothing
    Given the operators of the change "<change>" are warned of mistakes they may make
    And the memories imported from "snapshots/examples/import", as the app holds them before the change "<change>"
    When the operator runs the change "<change>" with each of those mistakes
    Then each run is refused in one line that names what to fix
    When the operator runs the change "<change>" again, as it should be run
    Then every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times

  Scenario: A file refused by the loader of the store a change reads loads nothing, a stream says what it loaded
    Given the loader of the store the change "<change>" reads takes records in chunks its operators are told of
    When the operator gives that loader those records as a file
    Then the loader refuses it in one line naming the record's line, and the store holds none of the records
    When the operator streams the same records to that loader
    Then the loader refuses it in one line naming the record's line and how many records it loaded before it, and the store holds exactly those

  Scenario: A change an operator runs with settings at the edges of what it takes carries every memory over
    Given the operators of the change "<change>" may run it with settings at the edges of what it takes
    And the memories imported from "snapshots/examples/import", as the app holds them before the change "<change>"
    When the operator runs the change "<change>" with each of those settings
    Then each run ends well and accounts for every memory of the history
    And after each run the store holds exactly the vector indexes the app promises for its setting
    And every historical memory is recalled for its owner and for nobody else
    And every historical memory keeps its conversation and its creation and expiry times

  @forgetting
  Scenario: Nothing an owner deleted comes back when the change runs again
    Given the change "<change>" runs again from the store it reads, as a migration does
    And the memories imported from "snapshots/examples/import", as the app holds them before the change "<change>"
    And the app goes through the change "<change>"
    When Ana, one of the history's owners, deletes one of her memories
    And the app goes through the change "<change>" again
    Then what Ana took back is neither listed nor found, and the app's store holds nothing of it
    And the change counted each memory Ana took back as deleted by its owner, and every other as already there

  @forgetting
  Scenario: A store its owners emptied stays empty when the change runs again
    Given the change "<change>" runs again from the store it reads, as a migration does
    And the memories imported from "snapshots/examples/import", as the app holds them before the change "<change>"
    And the app goes through the change "<change>"
    When Ana, one of the history's owners, clears all her memories, as every other owner does
    And the app goes through the change "<change>" again
    Then what Ana took back is neither listed nor found, and the app's store holds nothing of it
    And the change counted every memory as deleted by its owner

  @forgetting
  Scenario: Nothing of a deleted account comes back when the change runs again
    Given the change "<change>" runs again from the store it reads, as a migration does
    And the memories imported from "snapshots/examples/import", as the app holds them before the change "<change>"
    And the app goes through the change "<change>"
    When Ana, one of the history's owners, has her account deleted
    And the app goes through the change "<change>" again
    Then the app's store holds nothing of what Ana took back
    And the change counted each memory Ana took back as of an owner it does not know, and every other as already there
