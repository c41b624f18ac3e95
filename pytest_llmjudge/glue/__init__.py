"""The pytest glue: nodes, the run state that wires hooks to the packages before it, selection,
snapshots, lint items. The only package (with plugin.py and hookspecs.py) that imports pytest."""
