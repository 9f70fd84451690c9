"""Widgets of the memoryctl TUI, one module per area of the screen."""

from memoryctl.tui.widgets.memory_list import MemoryList, Row, RowPages
from memoryctl.tui.widgets.memory_view import MemoryView

__all__ = ["MemoryList", "MemoryView", "Row", "RowPages"]
