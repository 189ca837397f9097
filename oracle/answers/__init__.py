"""Reading answers: an LLM's text scanned, its schedule or structure extracted, parsed, replayed.

Imports the rooms below it: base, judge, vector, uncertain.
"""
