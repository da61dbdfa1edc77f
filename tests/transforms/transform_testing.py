"""Constants shared by the transform tests (imported by name: this directory is on sys.path)."""

import datetime as dt

TS = 1_709_622_489_123  # 2024-03-05T07:08:09.123Z
TS_DATETIME = dt.datetime(2024, 3, 5, 7, 8, 9, 123000, tzinfo=dt.UTC)
