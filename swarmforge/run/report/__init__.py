"""Worker reports: Markdown with exactly one fenced JSON block, published by a rename."""
