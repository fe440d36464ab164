"""The data set: works on disk, and the story `diffuse` makes from each (the noised input)."""
