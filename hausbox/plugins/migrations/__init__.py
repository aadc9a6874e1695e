"""Migrations of the plugins component (one sequence with the core's: see core/database.py)."""
