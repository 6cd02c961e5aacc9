"""The screens: dashboard, run (tabs), and the dialogs (confirm, nudge, start run, verdict, help)."""
