"""Reporting: failure text, summary, JUnit properties, review and results files, HTML report."""
