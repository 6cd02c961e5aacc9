"""The screens: dashboard, run (tabs), and the dialogs (confirm, nudge, start run, verdict, help)."""
from textual.binding import Binding

# Help and Quit first in every full screen's footer: the footer lists the screen's keys before the app's, so at 80
# columns the app's own (Help, Quit) were the ones cut off. Bound here, they come first and are never cut.
HELP_AND_QUIT = [Binding("question_mark", "app.help", "Help"), Binding("q", "app.quit", "Quit")]
