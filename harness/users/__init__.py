"""What a scenario's user does, whatever they reach the app through (the `Actor` protocol), and what a hostile one
tries against another's data."""
