"""The command-line face: one module per command group over the core."""

from memoryctl.cli.parser import main

__all__ = ["main"]
