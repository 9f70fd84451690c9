"""The cursor of a list a person acts on stops at its ends and skips disabled rows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memoryctl.tui.widgets.choice_list import next_enabled


def test_the_cursor_steps_over_disabled_rows():
    assert next_enabled([False, True, False], 0, 1) == 2
    assert next_enabled([False, True, False], 2, -1) == 0


def test_the_cursor_stops_at_either_end():
    assert next_enabled([False, False], 1, 1) is None
    assert next_enabled([False, False], 0, -1) is None


def test_from_nowhere_the_cursor_goes_to_the_first_or_the_last_enabled_row():
    assert next_enabled([True, False, False, True], None, 1) == 1
    assert next_enabled([True, False, False, True], None, -1) == 2
    assert next_enabled([], None, 1) is None


def test_a_cursor_past_the_end_after_rows_went_away_steps_back_to_the_last():
    assert next_enabled([False, False], 5, -1) == 1


@given(st.lists(st.booleans(), max_size=12), st.integers(0, 11), st.sampled_from([-1, 1]))
def test_a_step_lands_on_the_nearest_enabled_row_that_way(disabled, at, direction):
    found = next_enabled(disabled, at, direction)
    ahead = [row for row in range(len(disabled)) if (row - at) * direction > 0]
    if found is None:
        assert all(disabled[row] for row in ahead)
    else:
        assert found in ahead and not disabled[found]
        assert all(disabled[row] for row in ahead if (found - row) * direction > 0)
