"""Stored grade envelopes read back: an SQLite index over the store, listing and filtering."""
