"""Shared fixtures: each area's fixtures live in their own module, registered here."""
pytest_plugins = [
    "tests.fixtures_core",
]
