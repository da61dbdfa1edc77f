"""omconnect Kafka transport plugin."""
