"""Curation: human review decisions and the reviewed state of every question (Dagster-free)."""
