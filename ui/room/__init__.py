"""Serving a room: the memory budget, a dropped connection, the warm-up."""
