"""What the figures, the tables and the report compute from result rows, without drawing: which
rows count (rows), the rows reaching a target (targets), parallel speedups (speedups), growth
fits (growth) and loading a results folder (results). Nothing here imports matplotlib, so the
report is computed without it."""
