"""fem: dynamics of discrete structures (masses, springs, dampers, shocks, impacts)."""

__version__ = "0.1.0"
