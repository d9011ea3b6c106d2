"""The report: its data model, what students may see of it, and its renderers (one format registry)."""
