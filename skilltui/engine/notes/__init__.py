"""What makes a note acceptable: lint, the leakage guard and the names it looks for."""
