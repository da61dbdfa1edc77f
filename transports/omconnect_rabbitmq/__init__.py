"""omconnect RabbitMQ transport plugin."""
