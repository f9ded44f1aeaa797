"""The app under test: its target file, how it is started, attached to, restarted and stopped, the handle steps ask
of it, its own tools and the changes its operators make (migrations, store upgrades), its faults."""
