"""Sources kyma reads or mirrors: the connector framework, Postgres federation and CDC."""
