"""The real servers and clients the suite runs on: PostgreSQL with pgvector and Redis (embedded, or testcontainers
where a Docker engine answers), and one TLS context for every HTTP client."""
