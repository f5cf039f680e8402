"""Writes: threads, notes, tasks, the drafts a write takes, and the checks on their input."""
