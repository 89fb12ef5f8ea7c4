"""The conversation layer (issue 8): lobby, router, rooms, views, the console and the demo."""
