"""The run model: typed events, the one fold every interface renders, and the driver that runs training."""
