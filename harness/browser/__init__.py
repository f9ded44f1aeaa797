"""The browser beneath the actors: which Chromium to drive, the scenario's signed-in profiles, what a browser holds of
a session, and the evidence it records for the report."""
