"""Widgets both apps share: the live training app and `skilltui review`."""
