"""The activity feed: what happened in the home (orders, motion, recipes, modes, sunlight, alarms)."""
