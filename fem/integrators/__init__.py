"""Time integration schemes, one module per family, behind one stepping protocol (base.py)."""
