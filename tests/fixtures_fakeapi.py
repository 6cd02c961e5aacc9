"""Pytest fixtures for the fake Messages API: import them into a test module (`from tests.fixtures_fakeapi import *`).

- ``fake_anthropic``: a started FakeAnthropic (empty script, side requests answered as titles); push turns.
- ``fake_anthropic_env``: monkeypatches ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY to point at it.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fake_anthropic import FakeAnthropic

__all__ = ["fake_anthropic", "fake_anthropic_env"]


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(idle_timeout=300) as fake:
        yield fake


@pytest.fixture
def fake_anthropic_env(fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    for key, value in fake_anthropic.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return fake_anthropic
