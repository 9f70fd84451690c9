"""Import memories from another tool, as `memoryctl import` does: choose the source and
its path, check what it would make (a dry run), then import in one commit.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static

from memoryctl.importers import NAMES
from memoryctl.tui.screens.base import WorkFailed, describe
from memoryctl.tui.widgets.modals import DIALOG_CSS, Dialog

if TYPE_CHECKING:
    from memoryctl.importing import ImportReport
    from memoryctl.storage.vault import Vault

SHOWN_LINES = 6


def report_text(report: ImportReport) -> str:
    """A few lines that say what an import made (or would make) and skipped, and why."""
    lines = [report.summary]
    lines += [
        f"+ {m.title}" + (f" (retired: {m.retired})" if m.retired else "")
        for m in report.made[:SHOWN_LINES]
    ]
    lines += [f"~ {p.title} (its source changed)" for p in report.proposed[:SHOWN_LINES]]
    lines += [f"- {s.ref.rsplit('/', 1)[-1]}: {s.reason}" for s in report.skipped[:SHOWN_LINES]]
    return "\n".join(lines)


class ImportScreen(Dialog["ImportReport | None"]):
    """Gives back the report of the import it made, or None when the person cancels."""

    DEFAULT_CSS = (
        "ImportScreen {"
        + DIALOG_CSS
        + """
        Label { color: $text-muted; margin: 1 0 0 0; }
        #import-report { margin: 1 0 0 0; height: auto; max-height: 12; }
        #import-buttons { height: auto; margin: 1 0 0 0; align-horizontal: right; }
        #import-buttons Button { margin: 0 0 0 2; }
    }"""
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "run_import",
            "Import",
            id="memoryctl.import.run",
            tooltip="Import for real, in one commit",
        ),
        Binding(
            "escape", "cancel", "Cancel", id="memoryctl.import.cancel", tooltip="Import nothing"
        ),
    ]

    @dataclass
    class Done(Message):
        report: ImportReport

    def __init__(self, vault: Vault) -> None:
        super().__init__()
        self.vault = vault

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Import memories"
            box.border_subtitle = "enter checks · ctrl+s imports · esc cancels"
            yield Label("From")
            yield Select([(n, n) for n in NAMES], value=NAMES[0], allow_blank=False, id="source")
            yield Label("Path (a file or folder; it is only read)")
            yield Input(placeholder="~/.claude/projects/my-project/memory", id="import-path")
            yield Label("Namespace")
            yield Input(placeholder="default", id="import-namespace")
            yield Static("", id="import-report")
            with Horizontal(id="import-buttons"):
                yield Button("Check", id="import-check", compact=True)
                yield Button("Import", variant="primary", id="import-run", compact=True)

    def on_mount(self) -> None:
        self.query_one("#import-path", Input).focus()

    def _choice(self) -> tuple[str, Path, str | None] | None:
        path = self.query_one("#import-path", Input).value.strip()
        if not path:
            self.notify("Give the path to import from.", severity="warning")
            return None
        source = self.query_one("#source", Select).value
        namespace = self.query_one("#import-namespace", Input).value.strip() or None
        return str(source), Path(path).expanduser(), namespace

    @on(Input.Submitted)
    @on(Button.Pressed, "#import-check")
    def check(self) -> None:
        choice = self._choice()
        if choice:
            self.query_one("#import-report", Static).update("Checking…")
            self.import_in_thread(*choice, dry_run=True)

    @on(Button.Pressed, "#import-run")
    def action_run_import(self) -> None:
        choice = self._choice()
        if choice:
            self.query_one("#import-report", Static).update("Importing…")
            self.import_in_thread(*choice, dry_run=False)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="import", exit_on_error=False)
    def import_in_thread(
        self, source: str, path: Path, namespace: str | None, *, dry_run: bool
    ) -> None:
        from memoryctl.importers.base import ImportSourceError
        from memoryctl.importing import run_import

        try:
            report = run_import(
                self.vault,
                source,
                path,
                namespace=namespace,
                dry_run=dry_run,
                now=dt.datetime.now(dt.UTC),
            )
        except ImportSourceError as error:  # the source as given cannot be read: its words
            self.post_message(WorkFailed(f"import from {source}", str(error)))
            return
        except Exception as error:
            self.post_message(WorkFailed(f"import from {source}", describe(error)))
            return
        self.post_message(self.Done(report))

    @on(Done)
    def done(self, message: Done) -> None:
        if message.report.dry_run:
            self.query_one("#import-report", Static).update(report_text(message.report))
        else:
            self.dismiss(message.report)

    @on(WorkFailed)
    def work_failed(self, message: WorkFailed) -> None:
        self.query_one("#import-report", Static).update("")
        self.notify(f"Could not {message.what}: {message.error}", severity="error", timeout=10)
