"""The sections of REPRODUCTION.md, one module per kind of section (render.py puts them in order)."""
