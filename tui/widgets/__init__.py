"""The widgets of the run screen's tabs, one per file."""
