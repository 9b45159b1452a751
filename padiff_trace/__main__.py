"""``python -m padiff_trace`` runs the command line."""

from padiff_trace.cli import main

raise SystemExit(main())
