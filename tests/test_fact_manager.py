"""The model server answers the calls Khoj 2.0.0b28 makes besides the chat (model_server/fact_manager.py):
the prompts below are its own templates, filled as its code fills them."""

from __future__ import annotations

import json

from model_server.server import answer

MUNINN = """You are Muninn, the user's memory manager. Construct and maintain an accurate, up-to-date set of facts \
about and on behalf of the user.

# Example
Existing Facts:
[
  {
    "id": "5283",
    "raw": "I am not interested in sports",
    "updated_at": "2023-10-01T12:00:00+00:00"
  }
]

Latest Chat Session:
- User: I had an amazing day today! I played a game of football.
- AI: That's great to hear!

Response:
{"create": ["I enjoy playing football"], "delete": ["5283"]}

# Input
Existing Facts:
EXISTING

Latest Chat Session:
SESSION"""

SHOWN = json.dumps([{"id": "7", "raw": "My locker code is 1234.", "updated_at": "2026-12-01T10:00:00+00:00"},
                    {"id": "8", "raw": "My gate code is 7731.", "updated_at": "2026-12-01T10:00:00+00:00"}], indent=2)


def manage(existing: str, session: str) -> dict:
    prompt = MUNINN.replace("EXISTING", existing).replace("SESSION", session)
    return json.loads(answer([{"role": "user", "content": prompt}]).content or "")


def test_the_memory_manager_creates_each_fact_the_user_states_and_deletes_the_shown_ones_it_corrects() -> None:
    assert manage(SHOWN, "User: Actually, my locker code is 5150. And my bank is Lloyds.\n") == {
        "create": ["Actually, my locker code is 5150.", "And my bank is Lloyds."], "delete": ["7"]}


def test_the_memory_manager_reads_only_its_input_and_repeats_nothing_it_was_shown() -> None:
    """The example's facts and session are not the turn's; a fact shown as it is said is neither created nor
    deleted; with nothing shown Khoj writes `[]`."""
    assert manage(SHOWN, "User: My gate code is 7731.\n") == {"create": [], "delete": []}
    assert manage("[]", "User: Hello there\n") == {"create": [], "delete": []}


def test_the_tool_choice_picks_the_chat_alone() -> None:
    prompt = ("Which of the data sources, output format listed below would you use to answer the user's question? "
              "You **only** have access to the following:\n\nData Sources:\n- general\n\nQ: What is my gate code?\n"
              "Khoj:")
    assert json.loads(answer([{"role": "user", "content": prompt}]).content or "") == {
        "source": ["general"], "output": "text"}


def test_retrieved_memories_are_memories_not_turns_and_the_newest_statement_wins() -> None:
    retrieved = ("Your memory system retrieved the following memories about me based on our previous conversations. "
                 "Ignore them if they are not relevant to the query.\n<retrieved_memories>\n"
                 "- [2026-12-01 10:00:00]: My locker code is 1234.\n"
                 "- [2026-12-03 10:00:00]: My locker code is 5150.\n</retrieved_memories>")
    messages = [{"role": "system", "content": "You are Khoj, a smart, inquisitive and helpful personal assistant."},
                {"role": "user", "content": retrieved}, {"role": "user", "content": "What is my locker code?"}]
    assert answer(messages).content == "Your locker code is 5150."


def test_a_title_is_the_first_words_of_the_conversation() -> None:
    prompt = ("You are an extremely smart and helpful title generator assistant. Given a conversation, extract the "
              "subject of the conversation. Crisp, informative, ten words or less.\n\nConversation History:\n"
              "User: My locker code is 5150.\nAI: Got it.\n\nAssistant:")
    assert answer([{"role": "user", "content": prompt}]).content == "My locker code is"
