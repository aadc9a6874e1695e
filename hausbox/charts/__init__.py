"""Saved charts: a name and a free-form configuration (series, time range, axis options)."""
