"""What the TUI's workers share."""

# A worker's description, given so that Textual does not write one out of the `repr` of
# its arguments on the UI thread as the worker starts: the rowids of 100,000 memories
# took 16 ms to write out, on every keystroke in the filter (bench/tui_bench.py); a
# bundle holds every memory it shows.
QUIET = "(its arguments are not shown)"
