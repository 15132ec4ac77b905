"""Impact links: restitution, sticking and separation, and the schemes that run them."""
