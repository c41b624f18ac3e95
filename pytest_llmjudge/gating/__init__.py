"""Pure gating: records, gates, statistics, calibration, exit-status policy (no pytest here)."""
