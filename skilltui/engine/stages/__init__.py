"""One step's stages for each work (forward, loss) and group (reduce), and the services they share."""
