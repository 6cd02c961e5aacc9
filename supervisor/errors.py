"""The one kind of error a user acts on: every room's user-facing errors derive from ``UserError``, so the face
prints them as one line (`nightshift: ...`, exit 2) and lets anything else surface as the bug it is.

May import: nothing.
"""
from __future__ import annotations


class UserError(Exception):
    """A one-line error for a user to act on: it names the thing and the fix."""


def is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, UserError)
