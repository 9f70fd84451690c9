"""memoryctl: keep an AI agent's memory correct."""

__version__ = "0.1.0"
