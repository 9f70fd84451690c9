"""UFO hosted: release tooling for the hosted control plane."""

__version__ = "0.9.2"
