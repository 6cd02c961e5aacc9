"""The nightshift TUI (Textual): reads run directories, writes only inbox commands. Entry point: tui.app.main,
started by the face, which hands it the actions that need the whole composition (see tui/seams.py).

May import: errors, config, run, backends, shift, fleet, verify.
"""
