"""Pure-Python (numpy) twins of the browser explorables: no Django, runnable as scripts."""
