"""Running training: the in-process driver, the forked trainer and its wire, headless training
and the console renderer. The apps and commands start a run through here."""
