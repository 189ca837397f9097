"""The ``peakopt`` command line: a thin click layer over the library."""
