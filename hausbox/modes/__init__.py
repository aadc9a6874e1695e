"""Modes: named home states with per-zone impacts (see service.py)."""
