"""Button actions: what a press of a button equipment does (see service.py)."""
