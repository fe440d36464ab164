"""Held-out measurement: validation passes, their statistics and the gate's verdict on an update."""
