"""For agent runtimes: profiling real commands, the admission controller, traces scored as they ran."""
