"""Textual screens, one per user task."""
