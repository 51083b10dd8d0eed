"""perftrack: continuous performance-regression tracking for MySQL-family servers."""

__version__ = "0.1.0"
