"""The run directory contract: paths, the append-only event log, the state fold and its snapshot, the user
registry, liveness, the inbox of commands, watching (inotify or polling), notifications, and the run's story
told from its events. Everything any reader (CLI, TUI, another login node) needs to know lives here.

May import: errors.
"""
