"""Planning on the program graph: which values move (planner), where the moves go (placement)."""
