"""One place that turns any error into the line a user reads and an exit code."""

from __future__ import annotations

EXIT_USER = 1


def describe(error: BaseException) -> tuple[str, int]:
    from memoryctl.storage.config import ConfigError
    from memoryctl.storage.gitrepo import GitError
    from memoryctl.storage.index import is_index_error
    from memoryctl.storage.vault import VaultError

    if isinstance(error, VaultError | ConfigError | GitError):
        return str(error), EXIT_USER
    if type(error).__name__ == "UserError":
        return str(error), EXIT_USER
    if is_index_error(error):
        return (
            f"the index could not be read ({error}); run `memoryctl reindex --full` to rebuild it",
            EXIT_USER,
        )
    if isinstance(error, PermissionError):
        return f"permission denied: {error.filename}", EXIT_USER
    if isinstance(error, OSError):
        where = f" ({error.filename})" if error.filename else ""
        return f"{error.strerror or error}{where}", EXIT_USER
    return f"unexpected error: {type(error).__name__}: {error}", EXIT_USER
