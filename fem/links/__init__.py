"""Nonlinear links: shocks against obstacles or between nodes."""
