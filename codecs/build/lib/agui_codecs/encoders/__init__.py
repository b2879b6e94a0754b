"""Encoders: AG-UI 1.0 events → client bytes."""
