"""Published model weights shipped as package data; see manifest.json and core/published_weights.py."""
