"""Recipes: automation templates (definitions) and their parameterised instances.

The plugin API is documented in ``api.py``; built-in recipes live in ``builtin/`` and use it.
"""
