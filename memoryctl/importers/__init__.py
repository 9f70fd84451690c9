"""Importers: every peer's memories, read from its own format, never changed.

One module per source. Each reads PATH and yields `Found` memories and `Skipped`
parts with the reason (`base`); `registry.SOURCES` maps each name to its reader, and
`memoryctl.importing` turns what they find into one plan and one commit. This module
imports nothing, so the CLI can list the names without loading the readers.
"""

NAMES = (
    "claude-code",
    "claude-md",
    "agents-md",
    "gemini-md",
    "cursor-rules",
    "cline",
    "basic-memory",
    "mem0",
    "letta",
)
