"""Energy: the tariff (peak ``hp`` / off-peak ``hc`` schedules and prices), its classification of
energy readings, and the energy status. History-backed routes come with the history store."""
