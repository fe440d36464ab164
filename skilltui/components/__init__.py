"""Widgets and dialogs that the live app (`skilltui train`) and the history app (`skilltui review`) share."""
