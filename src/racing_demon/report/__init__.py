"""Text and JSON reporters for the commands."""
