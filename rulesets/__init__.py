"""Rulesets: one folder each, registered with the engine on import."""
