"""The lecture in the app: its modes, the tour, a page's figures leaving the app."""
