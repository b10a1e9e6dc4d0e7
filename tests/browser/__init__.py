"""The viewer's tests in a real headless Chromium (marked browser)."""
