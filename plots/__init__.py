"""Pictures: Gantt and load-against-capacity plots, and the HTML report."""
