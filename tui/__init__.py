"""The nightshift TUI (Textual): reads run directories, writes only inbox commands. Entry point: tui.app.main."""
