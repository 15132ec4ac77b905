"""Everything in modal coordinates: real and complex modes, projection, recombination."""
