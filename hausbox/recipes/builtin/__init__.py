"""The built-in recipes, each registered through the recipe plugin API (see ../api.py)."""
