"""`python -m skilltui` is the same as the `skilltui` command."""

from .cli import main

raise SystemExit(main())
