"""The per-page cached wrappers: ``ui/cache/<page id>.py`` (and the model picker)."""
