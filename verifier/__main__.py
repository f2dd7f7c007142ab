"""``python -m verifier`` runs the command-line interface."""

from verifier.cli import main

raise SystemExit(main())
