"""The app's numbered screens, apart from the app so the command line can name them
without importing Textual."""

from __future__ import annotations

# (mode, key, name, what it is for), in the order of their keys.
SCREENS = (
    ("vault", "1", "Vault", "Find and read memories"),
    ("pins", "2", "Pins", "Order the pins against the token budget"),
    ("review", "3", "Review", "Approve or decline proposed changes"),
    ("corrections", "4", "Corrections", "See and steer what each correction reaches"),
    ("preview", "5", "Preview", "See exactly what the agent gets next turn"),
    ("agents", "6", "Agents", "See the agents that may write, and revoke one"),
)
MODES = tuple(mode for mode, *_ in SCREENS)
