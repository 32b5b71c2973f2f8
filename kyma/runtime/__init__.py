"""The services kyma runs for itself, such as the embedded PostgreSQL holding its catalog."""
