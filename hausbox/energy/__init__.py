"""Energy: the tariff (peak ``hp`` / off-peak ``hc`` schedules and prices), its classification of
energy readings, and the energy reads made from the history store's sums: status, history per
calendar period, the breakdown by submeter, and the baseline arbiter's metrics."""
