"""Stubs generated from proto/checkpoint/v1 at build time (setup.py); never edited or committed."""
