"""Notification publishers: messages to a chat bot, a webhook or web push when mapped values change
(see service.py), and system alarms for the publishers that ask for them."""
