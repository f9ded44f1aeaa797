"""The words every layer shares: a turn, a fact and its question, how an answer and an order are judged, the
assistant's language, expected-versus-actual recall, waiting with a deadline, and the scenario's seeded data."""
