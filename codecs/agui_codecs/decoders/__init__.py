"""Decoders: upstream bytes → AG-UI 1.0 events."""
