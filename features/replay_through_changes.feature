@migration
Feature: Every memory survives each change the app goes through
  A history of memories is put into the app as it is before a change its operators make (its store migrated, its
  embedding model changed with the re-index that goes with it), the app goes through the change the way they would,
  and then every memory is checked: still there, its owner's only, with its text, conversation and times unchanged,
  and recalled by its own text; every golden question recalls what it recalled before. Each app declares its changes
  in its target file, and each change is one test case, named after it; the target also says which sizes of
  history it replays (an app whose every read goes through its API replays a few hundred memories).

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
