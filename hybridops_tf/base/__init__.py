"""What every layer uses: errors with their exit codes, durable private files, redaction. Imports nothing of hyops."""
