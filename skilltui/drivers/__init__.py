"""Running training: the in-process driver, the app's trainer process and its wire, headless training
and the console renderer. The apps and commands start a run through here."""
