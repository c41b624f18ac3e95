"""Model access: model strings, the judges of a run and their local servers, keys and redaction,
the response cap, judge configurations and what a failed call was (``JudgeFailure``)."""
