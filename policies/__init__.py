"""The standard library of policies, shipped as package data (``volcano/``)."""
