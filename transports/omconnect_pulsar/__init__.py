"""omconnect Pulsar transport plugin."""
