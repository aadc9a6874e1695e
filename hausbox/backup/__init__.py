"""Backup and restore: nothing lost, ever (see ``service.py``, ``staging.py`` and ``apply.py``)."""
