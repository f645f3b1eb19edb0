"""Poker: cards and hand strength, Pio-style ranges, no-limit betting abstractions, river endgames."""
