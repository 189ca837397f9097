"""For agent runtimes: profiling real commands and the admission controller that runs real steps."""
