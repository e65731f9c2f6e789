"""Research tools: reading the web from an allow-list of origins (``fetch``)."""
