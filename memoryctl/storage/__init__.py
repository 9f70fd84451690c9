"""The headless core's storage: vault files, git, the SQLite index and watching.

Importing this package never imports the TUI.
"""
