"""Integrations bring devices in. The plugin API is documented in ``hausbox.integrations.api``."""
