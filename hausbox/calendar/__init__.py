"""The calendar: weekly slots switching modes, per profile (see service.py)."""
