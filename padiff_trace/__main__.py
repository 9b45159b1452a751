"""``python -m padiff_trace`` runs the command line (also how ``run`` starts its recorder children)."""

from padiff_trace.cli import console

if __name__ == "__main__":
    console()
