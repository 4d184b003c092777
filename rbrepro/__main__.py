"""`python -m rbrepro` runs the command line."""

from rbrepro.cli import app

app()
