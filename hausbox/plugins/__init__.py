"""Plugins: the store (registry index and personal sources), installed plugin archives, their loading."""
