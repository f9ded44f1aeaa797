"""Playwright page objects: the only place that knows how to find things on the app's screens."""
