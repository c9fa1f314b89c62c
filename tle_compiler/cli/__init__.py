"""Command-line tools: ``tle-dump``."""
