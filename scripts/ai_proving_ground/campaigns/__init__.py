"""Campaigns: many attempts in a seeded order, and honest statistics over them."""
