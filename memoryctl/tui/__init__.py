"""The terminal face: the Textual app, its screens and widgets, and TUI-only helpers."""
